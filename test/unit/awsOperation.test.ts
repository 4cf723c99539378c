import { describe, expect, it } from 'vitest';
import { errorResponse, identifyCall, protocolOf, signingService } from '../../dev/awsOperation.ts';

const auth = (service: string): string =>
  `AWS4-HMAC-SHA256 Credential=testing/20261122/us-east-1/${service}/aws4_request, SignedHeaders=host, Signature=abc`;
const form = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };

describe('identifyCall', () => {
  it.each([
    {
      reason: 'query protocol: Action in the form body',
      req: {
        method: 'POST',
        url: '/',
        headers: { ...form, authorization: auth('elasticloadbalancing') },
        body: 'Action=CreateLoadBalancer&Version=2015-12-01',
      },
      want: ['elasticloadbalancing', 'CreateLoadBalancer'],
    },
    {
      reason: 'unsigned STS web-identity call',
      req: { method: 'POST', url: '/', headers: form, body: 'Action=AssumeRoleWithWebIdentity&RoleArn=x' },
      want: ['sts', 'AssumeRoleWithWebIdentity'],
    },
    {
      reason: 'Route 53 change batch',
      req: {
        method: 'POST',
        url: '/2013-04-01/hostedzone/Z123/rrset/',
        headers: { authorization: auth('route53') },
        body: '<x/>',
      },
      want: ['route53', 'ChangeResourceRecordSets'],
    },
    {
      reason: 'Route 53 list with query string',
      req: {
        method: 'GET',
        url: '/2013-04-01/hostedzone/Z123/rrset?maxitems=300',
        headers: { authorization: auth('route53') },
        body: '',
      },
      want: ['route53', 'ListResourceRecordSets'],
    },
    {
      reason: 'Route 53 GetChange',
      req: {
        method: 'GET',
        url: '/2013-04-01/change/C42',
        headers: { authorization: auth('route53') },
        body: '',
      },
      want: ['route53', 'GetChange'],
    },
    {
      reason: 'JSON protocol target header',
      req: {
        method: 'POST',
        url: '/',
        headers: { authorization: auth('secretsmanager'), 'x-amz-target': 'secretsmanager.GetSecretValue' },
        body: '{}',
      },
      want: ['secretsmanager', 'GetSecretValue'],
    },
    {
      reason: "the emulator's own API",
      req: { method: 'POST', url: '/moto-api/reset', headers: {}, body: '' },
      want: ['moto', '/moto-api/reset'],
    },
    {
      reason: 'an unknown REST path keeps method and path',
      req: {
        method: 'GET',
        url: '/2013-04-01/delegationset',
        headers: { authorization: auth('route53') },
        body: '',
      },
      want: ['route53', 'GET /2013-04-01/delegationset'],
    },
  ])('$reason', ({ req, want }) => {
    const call = identifyCall(req);
    expect([call.service, call.operation]).toEqual(want);
  });
});

describe('signingService', () => {
  it('reads the credential scope and ignores garbage', () => {
    expect(signingService(auth('rds'))).toBe('rds');
    expect(signingService('Bearer x')).toBeUndefined();
    expect(signingService(undefined)).toBeUndefined();
  });
});

describe('errorResponse', () => {
  it.each([
    {
      service: 'route53',
      contains:
        '<ErrorResponse xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><Error><Type>Sender</Type><Code>Throttling</Code>',
    },
    { service: 'rds', contains: '<Code>Throttling</Code>' },
    { service: 'ec2', contains: '<Response><Errors><Error><Code>Throttling</Code>' },
    { service: 'secretsmanager', contains: '"__type":"Throttling"' },
  ])('shapes errors for $service in its protocol', ({ service, contains }) => {
    const e = errorResponse(service, 400, 'Throttling', 'Rate <exceeded>', 'req-1');
    expect(e.status).toBe(400);
    expect(e.body).toContain(contains);
    expect(e.headers['x-amzn-requestid']).toBe('req-1');
    if (protocolOf(service) !== 'json') expect(e.body).toContain('Rate &lt;exceeded&gt;');
  });

  it('marks 5xx errors as the receiver’s fault', () => {
    expect(errorResponse('rds', 503, 'ServiceUnavailable', 'x', 'r').body).toContain('<Type>Receiver</Type>');
  });
});
