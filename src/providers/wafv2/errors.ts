/** WAFv2 codes no retry fixes (beyond the generic table). WAFUnavailableEntity (an ACL still being
 * created) is left to the retry: it goes away by itself. */
export const wafv2Terminal: readonly string[] = [
  'WAFNonexistentItemException',
  'WAFInvalidParameterException',
  'WAFInvalidOperationException',
  'WAFLimitsExceededException',
  'WAFSubscriptionNotFoundException',
];

/** The table to pass to classifyAwsError for WAFv2. */
export const wafv2ErrorTable = { terminal: wafv2Terminal } as const;
