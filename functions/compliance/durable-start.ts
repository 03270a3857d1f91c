/**
 * Starts a batch's durable execution: an asynchronous `Invoke` of the batch function's `live`
 * alias (`COMPLIANCE_FUNCTION`) with `{ batchId }`, named after the batch
 * (`DurableExecutionName`), so that a start repeated for the same batch runs it once: Lambda
 * answers `DurableExecutionAlreadyStartedException`, which counts as started. The call
 * returns as soon as Lambda has queued the execution (202); the batch reports its own end.
 *
 * The Lambda client is created on the first start, not at init: the read routes of this
 * function's container never pay for it.
 */
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { requiredEnv } from '../platform/env.js';

/** The execution name of a batch: unique per function, so one batch never runs twice. */
export const executionName = (batchId: string): string => `batch-${batchId}`;

let client: Promise<{ client: LambdaClient; InvokeCommand: typeof import('@aws-sdk/client-lambda').InvokeCommand }> | undefined;

export const startDurableExecution = async (batchId: string): Promise<void> => {
  client ??= import('@aws-sdk/client-lambda').then((sdk) => ({
    // The batch is queued, not run, by this call: a short attempt budget keeps the API answer fast.
    client: new sdk.LambdaClient({ maxAttempts: 3 }),
    InvokeCommand: sdk.InvokeCommand,
  }));
  const { client: lambda, InvokeCommand } = await client;
  try {
    const out = await lambda.send(
      new InvokeCommand({
        FunctionName: requiredEnv('COMPLIANCE_FUNCTION'),
        InvocationType: 'Event',
        DurableExecutionName: executionName(batchId),
        Payload: new TextEncoder().encode(JSON.stringify({ batchId })),
      }),
    );
    if (out.StatusCode !== 202) throw new Error(`the batch function answered ${out.StatusCode ?? 'no status'} to an asynchronous invoke`);
  } catch (error) {
    if ((error as { name?: string }).name === 'DurableExecutionAlreadyStartedException') return;
    throw error;
  }
};
