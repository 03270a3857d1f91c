/**
 * Starts a durable execution: an asynchronous `Invoke` of a durable function's `live` alias
 * (its ARN in an environment variable) with a small event, named (`DurableExecutionName`) so
 * that a start repeated for the same work runs it once: Lambda answers
 * `DurableExecutionAlreadyStartedException`, which counts as started. The call returns as soon
 * as Lambda has queued the execution (202); the work reports its own end. Compliance batches
 * start theirs here (`COMPLIANCE_FUNCTION`), remediation runs theirs (`REMEDIATION_FUNCTION`).
 *
 * The Lambda client is created on the first start, not at init: the read routes of this
 * function's container never pay for it.
 */
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { requiredEnv } from '../platform/env.js';

/** The execution name of a batch: unique per function, so one batch never runs twice. */
export const executionName = (batchId: string): string => `batch-${batchId}`;

let client: Promise<{ client: LambdaClient; InvokeCommand: typeof import('@aws-sdk/client-lambda').InvokeCommand }> | undefined;

/** Queues the execution `name` of the function whose alias ARN is in `functionVariable`, with `payload`; a repeated name is a success. */
export const startDurable = async (functionVariable: string, name: string, payload: unknown): Promise<void> => {
  client ??= import('@aws-sdk/client-lambda').then((sdk) => ({
    // The work is queued, not run, by this call: a short attempt budget keeps the API answer fast.
    client: new sdk.LambdaClient({ maxAttempts: 3 }),
    InvokeCommand: sdk.InvokeCommand,
  }));
  const { client: lambda, InvokeCommand } = await client;
  try {
    const out = await lambda.send(
      new InvokeCommand({
        FunctionName: requiredEnv(functionVariable),
        InvocationType: 'Event',
        DurableExecutionName: name,
        Payload: new TextEncoder().encode(JSON.stringify(payload)),
      }),
    );
    if (out.StatusCode !== 202) throw new Error(`the durable function answered ${out.StatusCode ?? 'no status'} to an asynchronous invoke`);
  } catch (error) {
    if ((error as { name?: string }).name === 'DurableExecutionAlreadyStartedException') return;
    throw error;
  }
};

/** Starts a batch's durable execution (`COMPLIANCE_FUNCTION`) with `{ batchId }`. */
export const startDurableExecution = (batchId: string): Promise<void> => startDurable('COMPLIANCE_FUNCTION', executionName(batchId), { batchId });
