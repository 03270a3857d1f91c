/**
 * {@link DurableFunctionApi} over the Lambda API, for one durable function (its unqualified name): the
 * versions (`ListVersionsByFunction`), the aliases' targets (`ListAliases`), the durable
 * executions (`ListDurableExecutionsByFunction`) and deleting a version (`DeleteFunction`
 * with the version as qualifier). Every listing is read to its last page.
 */
import {
  DeleteFunctionCommand,
  type LambdaClient,
  paginateListAliases,
  paginateListDurableExecutionsByFunction,
  paginateListVersionsByFunction,
} from '@aws-sdk/client-lambda';
import type { DurableFunctionApi, DurableExecution, FunctionVersion } from './housekeeping.js';

const collect = async <P, T>(pages: AsyncIterable<P>, items: (page: P) => readonly T[] | undefined): Promise<T[]> => {
  const all: T[] = [];
  for await (const page of pages) all.push(...(items(page) ?? []));
  return all;
};

/** The housekeeping's API through `client`, for the durable function named `functionName`. */
export const lambdaDurableFunctionApi = (client: LambdaClient, functionName: string): DurableFunctionApi => ({
  listVersions: async () =>
    (await collect(paginateListVersionsByFunction({ client }, { FunctionName: functionName }), (p) => p.Versions)).flatMap((v): FunctionVersion[] =>
      v.Version && v.Version !== '$LATEST' && v.LastModified ? [{ version: v.Version, published: new Date(v.LastModified) }] : [],
    ),
  aliasTargets: async () =>
    (await collect(paginateListAliases({ client }, { FunctionName: functionName }), (p) => p.Aliases)).flatMap((a) => [
      ...(a.FunctionVersion ? [a.FunctionVersion] : []),
      ...Object.keys(a.RoutingConfig?.AdditionalVersionWeights ?? {}),
    ]),
  listExecutions: async (version, statuses, startedAfter) =>
    (
      await collect(
        paginateListDurableExecutionsByFunction(
          { client },
          { FunctionName: functionName, Qualifier: version, Statuses: [...statuses], ...(startedAfter ? { StartedAfter: startedAfter } : {}), MaxItems: 1000 },
        ),
        (p) => p.DurableExecutions,
      )
    ).map(
      (e): DurableExecution => ({
        name: e.DurableExecutionName ?? '',
        arn: e.DurableExecutionArn ?? '',
        status: e.Status as DurableExecution['status'],
        started: e.StartTimestamp ?? new Date(0),
        ...(e.EndTimestamp ? { ended: e.EndTimestamp } : {}),
      }),
    ),
  deleteVersion: async (version) => {
    await client.send(new DeleteFunctionCommand({ FunctionName: functionName, Qualifier: version }));
  },
});
