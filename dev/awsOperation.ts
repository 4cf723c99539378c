/** An AWS API call as seen on the wire. */
export interface AwsCall {
  /** Signing name: route53, elasticloadbalancing, rds, ec2, sts, … ('moto' for the emulator's own API). */
  readonly service: string;
  /** API operation, e.g. ChangeResourceRecordSets. */
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  readonly body: string;
  /** The access key the request is signed with (SigV4 credential scope); undefined when unsigned. */
  readonly accessKeyId?: string;
}

/** The wire protocol a service speaks, which decides how errors are shaped. */
export type AwsProtocol = 'query' | 'ec2' | 'restXml' | 'json';

/** Which protocol a service uses. Pure. */
export function protocolOf(service: string): AwsProtocol {
  if (service === 'ec2') return 'ec2';
  if (service === 'route53' || service === 's3') return 'restXml';
  if (service === 'elasticloadbalancing' || service === 'rds' || service === 'sts' || service === 'iam') {
    return 'query';
  }
  return 'json';
}

const route53Routes: readonly { method: string; path: RegExp; operation: string }[] = [
  { method: 'POST', path: /^\/2013-04-01\/hostedzone\/?$/, operation: 'CreateHostedZone' },
  { method: 'GET', path: /^\/2013-04-01\/hostedzone\/?$/, operation: 'ListHostedZones' },
  { method: 'GET', path: /^\/2013-04-01\/hostedzonesbyname\/?$/, operation: 'ListHostedZonesByName' },
  { method: 'GET', path: /^\/2013-04-01\/hostedzonecount\/?$/, operation: 'GetHostedZoneCount' },
  {
    method: 'POST',
    path: /^\/2013-04-01\/hostedzone\/[^/]+\/rrset\/?$/,
    operation: 'ChangeResourceRecordSets',
  },
  { method: 'GET', path: /^\/2013-04-01\/hostedzone\/[^/]+\/rrset\/?$/, operation: 'ListResourceRecordSets' },
  { method: 'GET', path: /^\/2013-04-01\/hostedzone\/[^/]+\/?$/, operation: 'GetHostedZone' },
  { method: 'DELETE', path: /^\/2013-04-01\/hostedzone\/[^/]+\/?$/, operation: 'DeleteHostedZone' },
  { method: 'GET', path: /^\/2013-04-01\/change\/[^/]+\/?$/, operation: 'GetChange' },
  { method: 'POST', path: /^\/2013-04-01\/tags\/[^/]+\/[^/]+\/?$/, operation: 'ChangeTagsForResource' },
  { method: 'GET', path: /^\/2013-04-01\/tags\/[^/]+\/[^/]+\/?$/, operation: 'ListTagsForResource' },
  { method: 'POST', path: /^\/2013-04-01\/tags\/[^/]+\/?$/, operation: 'ListTagsForResources' },
];

/** The access key named in a SigV4 Authorization header, if any. Pure. */
export function signingAccessKey(authorization: string | undefined): string | undefined {
  return /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1];
}

/** The signing service named in a SigV4 Authorization header, if any. Pure. */
export function signingService(authorization: string | undefined): string | undefined {
  const m = /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(authorization ?? '');
  return m?.[1];
}

/**
 * Identifies service and operation of a request: the service from the SigV4
 * credential scope (unsigned STS web-identity calls from their Action), the
 * operation from `Action=` (query protocols), `X-Amz-Target` (JSON protocols)
 * or the method and path (Route 53's REST protocol). Pure.
 */
export function identifyCall(req: {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}): AwsCall {
  const url = new URL(req.url, 'http://proxy.invalid');
  const path = url.pathname;
  const header = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const accessKeyId = signingAccessKey(header('authorization'));
  const base = {
    method: req.method,
    path,
    body: req.body,
    ...(accessKeyId !== undefined ? { accessKeyId } : {}),
  };
  if (path.startsWith('/moto-api')) return { ...base, service: 'moto', operation: path };

  const form = (header('content-type') ?? '').includes('x-www-form-urlencoded')
    ? new URLSearchParams(req.body)
    : undefined;
  const action = form?.get('Action') ?? url.searchParams.get('Action') ?? undefined;
  let service = signingService(header('authorization'));
  if (service === undefined && action !== undefined && /^AssumeRoleWith/.test(action)) service = 'sts';
  service ??= 'unknown';

  if (action !== undefined) return { ...base, service, operation: action };
  const target = header('x-amz-target');
  if (target !== undefined) return { ...base, service, operation: target.split('.').pop() ?? target };
  if (service === 'route53') {
    const route = route53Routes.find((r) => r.method === req.method && r.path.test(path));
    if (route !== undefined) return { ...base, service, operation: route.operation };
  }
  return { ...base, service, operation: `${req.method} ${path}` };
}

/** An AWS error response in the service's own wire format. Pure. */
export function errorResponse(
  service: string,
  status: number,
  code: string,
  message: string,
  requestId: string,
): { status: number; headers: Record<string, string>; body: string } {
  const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const type = status >= 500 ? 'Receiver' : 'Sender';
  const common = { 'x-amzn-requestid': requestId };
  switch (protocolOf(service)) {
    case 'ec2':
      return {
        status,
        headers: { ...common, 'content-type': 'text/xml' },
        body: `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${esc(code)}</Code><Message>${esc(message)}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`,
      };
    case 'query':
    case 'restXml':
      return {
        status,
        headers: { ...common, 'content-type': 'text/xml' },
        body: `<?xml version="1.0"?>\n<ErrorResponse${xmlNamespace(service)}><Error><Type>${type}</Type><Code>${esc(code)}</Code><Message>${esc(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
      };
    case 'json':
      return {
        status,
        headers: { ...common, 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': code },
        body: JSON.stringify({ __type: code, message }),
      };
  }
}

/** The XML namespace a service puts on its error responses, as an attribute (Route 53's API version). */
function xmlNamespace(service: string): string {
  return service === 'route53' ? ' xmlns="https://route53.amazonaws.com/doc/2013-04-01/"' : '';
}
