/** The shapes of the API answers the console reads: the service's own where it has them (openapi.json has the full schemas). */
import type { RuleTotals } from '../../functions/compliance/grading.js';
import type { DevicePoint } from '../../functions/compliance/history-model.js';
import type { Report, ReportIssue } from '../../functions/compliance/model.js';
import type { Grade } from './table.js';

export type { DevicePoint, Report };
export type Totals = RuleTotals;
export type Issue = ReportIssue;

export type GradeCounts = Record<Grade, number>;

export interface Batch {
  readonly batchId: string;
  readonly kind: 'compliance' | 'backup';
  readonly treeId?: string;
  readonly version?: string;
  readonly planId?: string;
  readonly adapterId: string;
  readonly status: 'running' | 'completed' | 'failed';
  readonly total: number;
  readonly done: number;
  readonly totals: Totals;
  readonly grades: GradeCounts;
  readonly sync: string;
  readonly started: string;
  readonly finished?: string;
  readonly reason?: string;
}

export interface Plan {
  readonly planId: string;
  readonly name: string;
  readonly treeId: string;
  readonly version: string;
  readonly adapterId: string;
  readonly enabled: boolean;
  readonly schedule?: string;
  readonly lastBatch?: { readonly batchId: string; readonly at: string };
  readonly nextRunAt?: string;
  readonly broken?: { readonly reason: string; readonly detail: string };
}

export interface TrendItem {
  readonly batchId: string;
  readonly status: string;
  readonly started: string;
  readonly finished?: string;
  readonly total: number;
  readonly grades: GradeCounts;
}

export interface Tree {
  readonly id: string;
  readonly name: string;
  readonly deviceType: string;
  readonly versions: readonly string[];
  readonly lastUpdated: string;
  readonly description?: string;
}

export interface Rule {
  readonly id: string;
  readonly path: string;
  readonly mode: string;
  readonly severity: string;
  readonly value?: unknown;
  readonly description?: string;
  readonly [constraint: string]: unknown;
}

export interface TreeNode {
  readonly name: string;
  readonly devices: readonly string[];
  readonly select?: readonly Record<string, string>[];
  readonly rules: readonly Rule[];
  readonly children: readonly TreeNode[];
}

export interface TreeVersion {
  readonly treeId: string;
  readonly name: string;
  readonly root: TreeNode;
  readonly lastUpdated: string;
  readonly lastUpdatedBy: string;
}

export interface Adapter {
  readonly name: string;
  readonly type?: string;
  readonly baseUrl?: string;
  readonly state?: 'RUNNING' | 'STOPPED';
  readonly problem?: string;
  readonly detail?: string;
}

export interface AdapterHealth {
  readonly name: string;
  readonly status: 'up' | 'down';
  readonly state?: string;
  readonly latencyMs?: number;
  readonly httpStatus?: number;
  readonly reason?: string;
  readonly checkedAt?: string;
}

export interface Application {
  readonly name: string;
  readonly description?: string;
  readonly state: string;
  readonly logLevel?: string;
}

export interface ApplicationHealth {
  readonly name: string;
  readonly state: string;
  readonly status: string;
  readonly dependencies?: Record<string, { readonly status: string; readonly latencyMs?: number }>;
}

export interface StoredConfig {
  readonly configId: string;
  readonly takenAt: string;
  readonly batchId: string;
  readonly source: string;
  readonly size: number;
  readonly grade?: string;
}

export interface Remediation {
  readonly remediationId: string;
  readonly batchId: string;
  readonly mode: 'dry-run' | 'apply' | string;
  readonly status: string;
  readonly devices: number;
  readonly started: string;
  readonly finished?: string;
  readonly reason?: string;
  readonly startedBy?: string;
  readonly totals?: Record<string, number>;
  readonly rollback?: unknown;
}

export interface Started {
  readonly batchId?: string;
  readonly remediationId?: string;
  readonly status: unknown;
}
