/**
 * Set up in every test file: the global `awslambda` of Lambda's Node.js runtime, which streaming
 * handlers (`awslambda.streamifyResponse`, used by middy's streaming mode) need when they load.
 */
import { installLambdaStreaming } from '../../tools/local/lambda-worker.js';

installLambdaStreaming();
