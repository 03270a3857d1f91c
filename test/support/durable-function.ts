/**
 * An in-memory durable function behind the housekeeping's {@link DurableFunctionApi}: versions,
 * alias targets, executions (each on the version its ARN names); records the listings asked and
 * the versions deleted, and refuses to delete an alias target, as Lambda does.
 */
import type { DurableExecution, DurableFunctionApi, FunctionVersion } from '../../functions/compliance/housekeeping.js';

/** The ARN Lambda gives an execution named `name` of `functionName` on `version`. */
export const executionArn = (functionName: string, version: string, name: string): string =>
  `arn:aws:lambda:eu-west-1:123456789012:function:${functionName}:${version}/durable-execution/${name}/x1`;

export class FakeDurableFunction implements DurableFunctionApi {
  readonly deleted: string[] = [];
  readonly asked: { version: string; statuses: readonly string[]; startedAfter?: Date }[] = [];
  constructor(
    public versions: FunctionVersion[],
    public aliases: string[],
    public executions: DurableExecution[],
    readonly functionName = 'svc-ComplianceBatch',
  ) {}
  async listVersions() {
    return this.versions.filter((v) => !this.deleted.includes(v.version));
  }
  async aliasTargets() {
    return this.aliases;
  }
  async listExecutions(version: string, statuses: readonly DurableExecution['status'][], startedAfter?: Date) {
    this.asked.push({ version, statuses, ...(startedAfter ? { startedAfter } : {}) });
    return this.executions.filter((e) => e.arn.includes(`:${version}/`) && statuses.includes(e.status) && (!startedAfter || e.started > startedAfter));
  }
  async deleteVersion(version: string) {
    if (this.aliases.includes(version)) throw new Error(`version ${version} is an alias target`);
    this.deleted.push(version);
  }
  /** An execution of this function on `version`, named `name`. */
  execution(version: string, name: string, status: DurableExecution['status'], started: Date, ended?: Date): DurableExecution {
    return {
      name,
      arn: executionArn(this.functionName, version, name),
      status,
      started,
      ...(status === 'RUNNING' || !ended ? {} : { ended }),
    };
  }
}
