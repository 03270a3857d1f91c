import http, { request } from 'node:http';
import * as https from 'https';
export const handler = async () => ({ statusCode: 200, body: String(typeof request) + typeof http.Agent + typeof https.request });
