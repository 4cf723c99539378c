// Resources found by their tags, whatever their service: the Resource Groups Tagging API's
// GetResources. What a kind uses to find the children it made and may not have recorded (a create
// whose answer arrived but whose status write did not, the operator killed in between), which
// neither a recorded identifier nor a deterministic name finds any more once the spec stops
// naming them. The SDK is loaded by the first lookup (issue 16): a process that never looks
// never loads it.
import type { ResourceGroupsTaggingAPIClient } from '@aws-sdk/client-resource-groups-tagging-api';
import { RetryableError } from '../../runtime/errors.ts';
import { awsCall } from './calls.ts';
import type { AwsClients } from './clients.ts';
import { AwsReason } from './errors.ts';
import { LazyClient } from './lazyClient.ts';
import { tagMap } from './tags.ts';

/**
 * The Tagging API's codes beyond the generic tables: a pagination token that expired (a listing
 * that took too long) is retried from the start; a constraint of the account's organization is
 * not fixed by a retry. InvalidParameterException (terminal) and ThrottledException (throttling)
 * are in the generic tables already.
 */
export const taggingErrorTable = {
  terminal: ['ConstraintViolationException'],
  transient: ['InternalServiceException', 'PaginationTokenExpiredException'],
} as const;

/** The Tagging API's signing name: its rate limiter and the `service` label of its call metrics. */
export const taggingService = 'tagging';

/** A resource the Tagging API lists: its ARN and every tag it carries. */
export interface TaggedResource {
  readonly arn: string;
  readonly tags: Readonly<Record<string, string>>;
}

/** What to look for. */
export interface TagQuery {
  /** Resource types as the Tagging API names them, `service:type` (`elasticloadbalancing:targetgroup`). */
  readonly resourceTypes: readonly string[];
  /** Tags every resource found carries, key → value (all of them: the filters are ANDed). At least one. */
  readonly tags: Readonly<Record<string, string>>;
}

/** GetResources answers at most 100 resources a page. */
const maxPerPage = 100;
/** Pages read before a listing is given up (10,000 resources at 100 a page): a guard, not a quota. */
const maxPages = 100;

/** The Tagging API client of a set of AWS clients, made (and its SDK loaded) on first use. */
const taggingClient = new LazyClient<ResourceGroupsTaggingAPIClient>(taggingService, async (config) => {
  const { ResourceGroupsTaggingAPIClient } = await import('@aws-sdk/client-resource-groups-tagging-api');
  return new ResourceGroupsTaggingAPIClient({ ...config });
});

/**
 * Finds resources by tag with GetResources, one call per page (`PaginationToken`), through the
 * client `client` answers: its set's rate limiter, call metrics, tracing and per-attempt deadlines
 * ({@link AwsClients}). Read-only. The Tagging API is eventually consistent (AWS documents that a
 * resource may appear in it some time after it was tagged): what it answers may miss a resource
 * just created and may still list one just deleted, so it finds what other lookups cannot and
 * never stands in for the lookups that must be sure.
 */
export class TaggedResources {
  private readonly client: () => Promise<ResourceGroupsTaggingAPIClient>;
  private readonly perPage: number;

  /** `perPage`: resources asked per page (1–100; default 100, tests ask fewer to see the pages). */
  constructor(client: () => Promise<ResourceGroupsTaggingAPIClient>, perPage = maxPerPage) {
    this.client = client;
    this.perPage = Math.max(1, Math.min(maxPerPage, Math.floor(perPage)));
  }

  /**
   * Every resource of `q.resourceTypes` carrying all of `q.tags`, with its tags, in the order AWS
   * lists them (each once). `what` names the step in errors ("find target groups by tag"). Fails
   * with the engine's typed errors (classified with {@link taggingErrorTable}; throttling
   * retryable); a listing longer than 100 pages, or one whose token does not move on, is a
   * RetryableError. Loads the SDK at its first call.
   */
  async find(what: string, q: TagQuery): Promise<TaggedResource[]> {
    const filters = Object.entries(q.tags).map(([Key, Value]) => ({ Key, Values: [Value] }));
    if (filters.length === 0) throw new Error(`${what}: a tag query needs at least one tag`);
    const client = await awsCall(`${what}: load the Tagging API client`, taggingErrorTable, () =>
      this.client(),
    );
    const { GetResourcesCommand } = await import('@aws-sdk/client-resource-groups-tagging-api');
    const found = new Map<string, TaggedResource>();
    const seen = new Set<string>();
    let token: string | undefined;
    for (let page = 0; page < maxPages; page++) {
      const out = await awsCall(what, taggingErrorTable, () =>
        client.send(
          new GetResourcesCommand({
            TagFilters: filters,
            ResourceTypeFilters: [...q.resourceTypes],
            ResourcesPerPage: this.perPage,
            ...(token !== undefined ? { PaginationToken: token } : {}),
          }),
        ),
      );
      for (const r of out.ResourceTagMappingList ?? [])
        if (r.ResourceARN !== undefined && !found.has(r.ResourceARN))
          found.set(r.ResourceARN, { arn: r.ResourceARN, tags: tagMap(r.Tags) });
      token = out.PaginationToken;
      if (token === undefined || token === '') return [...found.values()];
      if (seen.has(token))
        throw new RetryableError(AwsReason.AwsError, `${what}: GetResources answered a page token twice`);
      seen.add(token);
    }
    throw new RetryableError(
      AwsReason.AwsError,
      `${what}: more than ${maxPages} pages of GetResources (${maxPages * this.perPage} resources); given up`,
    );
  }
}

/**
 * The lookups by tag of `aws` (one identity in one account and region), `perPage` resources a
 * page (default 100); nothing is loaded before the first.
 */
export function taggedResourcesOf(aws: AwsClients, perPage?: number): TaggedResources {
  return new TaggedResources(() => taggingClient.of(aws), perPage);
}
