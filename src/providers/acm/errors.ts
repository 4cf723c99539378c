/** ACM codes no retry fixes (beyond the generic table). */
export const acmTerminal: readonly string[] = [
  'InvalidArnException',
  'InvalidParameterException',
  'ValidationException',
  'ResourceNotFoundException',
];

/** The table to pass to classifyAwsError for ACM. */
export const acmErrorTable = { terminal: acmTerminal } as const;
