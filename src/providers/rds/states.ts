/** RDS DB instance states, spelled out as ACK's rds-controller does. */

/** Transitional states: poll again later. */
export const rdsWaitStates: readonly string[] = [
  'creating',
  'backing-up',
  'modifying',
  'rebooting',
  'renaming',
  'resetting-master-credentials',
  'maintenance',
  'upgrading',
  'starting',
  'stopping',
  'storage-optimization',
  'storage-config-upgrade',
  'configuring-enhanced-monitoring',
  'configuring-iam-database-auth',
  'configuring-log-exports',
  'converting-to-vpc',
  'moving-to-vpc',
];

/** Usable. */
export const rdsAvailableStates: readonly string[] = ['available', 'storage-full-optimization'];

/** Broken until someone acts: a terminal condition with the AWS status in it. */
export const rdsFailedStates: readonly string[] = [
  'failed',
  'incompatible-network',
  'incompatible-option-group',
  'incompatible-parameters',
  'incompatible-restore',
  'insufficient-capacity',
  'restore-error',
  'storage-full',
  'inaccessible-encryption-credentials',
  'inaccessible-encryption-credentials-recoverable',
];

/** RDS codes no retry fixes (beyond the generic table). Throttling and InvalidDBInstanceState are retried. */
export const rdsErrorTable = {
  terminal: [
    'InvalidParameterCombination',
    'InvalidParameterValue',
    'DBSubnetGroupNotFoundFault',
    'DBSecurityGroupNotFound',
    'InvalidVPCNetworkStateFault',
    'StorageQuotaExceeded',
    'InstanceQuotaExceeded',
    'InsufficientDBInstanceCapacity',
    'DBSnapshotNotFound',
    'StorageTypeNotSupported',
    'KMSKeyNotAccessibleFault',
  ],
  transient: ['InvalidDBInstanceState', 'InvalidDBInstanceStateFault', 'DBInstanceNotAvailable'],
} as const;
