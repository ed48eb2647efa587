// The networking CDK app test_cdk_network.py drives with the real `cdk` CLI against `cumulo serve`
// (`cdk -a "node net.js" ...`, sharing this folder's pinned aws-cdk and aws-cdk-lib): a VPC with
// two AZs and one NAT gateway, an ApplicationLoadBalancedFargateService from a public registry
// image (no Docker asset) behind HTTPS with an ACM certificate validated through a public zone
// (port 80 redirects), and a private hosted zone with a record. The public zone is a stack of its
// own, since the certificate's validation record outlives the certificate (as on AWS).
//
// What a redeploy changes: `-c desired=N` (the service's desired count) and `-c rulePath=/p`
// (a listener rule's path pattern).
const cdk = require('aws-cdk-lib');
const ec2 = require('aws-cdk-lib/aws-ec2');
const ecs = require('aws-cdk-lib/aws-ecs');
const patterns = require('aws-cdk-lib/aws-ecs-patterns');
const elbv2 = require('aws-cdk-lib/aws-elasticloadbalancingv2');
const route53 = require('aws-cdk-lib/aws-route53');
const acm = require('aws-cdk-lib/aws-certificatemanager');

const DOMAIN = 'cumulo-net.example.com';

class ZoneStack extends cdk.Stack {
  constructor(scope, id, props) {
    super(scope, id, props);
    this.zone = new route53.PublicHostedZone(this, 'Public', { zoneName: DOMAIN });
  }
}

class NetStack extends cdk.Stack {
  constructor(scope, id, props) {
    super(scope, id, props);
    const desired = Number(this.node.tryGetContext('desired') ?? 1);
    const rulePath = this.node.tryGetContext('rulePath') ?? '/health';

    const vpc = new ec2.Vpc(this, 'Vpc', { maxAzs: 2, natGateways: 1 });
    const cert = new acm.Certificate(this, 'Cert', {
      domainName: `app.${DOMAIN}`,
      validation: acm.CertificateValidation.fromDns(props.zone),
    });
    const cluster = new ecs.Cluster(this, 'Cluster', { vpc });
    const web = new patterns.ApplicationLoadBalancedFargateService(this, 'Web', {
      cluster,
      desiredCount: desired,
      minHealthyPercent: 100,
      circuitBreaker: { rollback: true },
      cpu: 256,
      memoryLimitMiB: 512,
      publicLoadBalancer: true,
      certificate: cert,
      redirectHTTP: true,
      taskImageOptions: {
        image: ecs.ContainerImage.fromRegistry('public.ecr.aws/nginx/nginx:stable'),
        containerPort: 80,
      },
    });
    web.listener.addAction('Health', {
      priority: 10,
      conditions: [elbv2.ListenerCondition.pathPatterns([rulePath])],
      action: elbv2.ListenerAction.fixedResponse(200, { contentType: 'text/plain', messageBody: 'ok' }),
    });

    const internal = new route53.PrivateHostedZone(this, 'Internal', { zoneName: 'internal.cumulo', vpc });
    new route53.CnameRecord(this, 'WebRecord', {
      zone: internal,
      recordName: 'web',
      domainName: web.loadBalancer.loadBalancerDnsName,
    });

    new cdk.CfnOutput(this, 'LoadBalancerDns', { value: web.loadBalancer.loadBalancerDnsName });
    new cdk.CfnOutput(this, 'ServiceName', { value: web.service.serviceName });
    new cdk.CfnOutput(this, 'ClusterName', { value: cluster.clusterName });
    new cdk.CfnOutput(this, 'ListenerArn', { value: web.listener.listenerArn });
    new cdk.CfnOutput(this, 'VpcId', { value: vpc.vpcId });
    new cdk.CfnOutput(this, 'InternalZoneId', { value: internal.hostedZoneId });
    new cdk.CfnOutput(this, 'CertificateArn', { value: cert.certificateArn });
  }
}

// Strong cross-stack references (an export of the zone's id, imported by CdkNet), said explicitly
// so synthesis does not stop on the CDK's warning about the default.
const app = new cdk.App({ context: { '@aws-cdk/core:defaultCrossStackReferences': 'strong' } });
const env = { account: '000000000000', region: 'us-east-1' };
const zone = new ZoneStack(app, 'CdkNetZone', { env });
new NetStack(app, 'CdkNet', { env, zone: zone.zone });
