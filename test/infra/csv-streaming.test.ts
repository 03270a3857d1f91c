/** The integrations of CSV routes stream (API Gateway response streaming); every other one buffers. */
import { describe, expect, it } from 'vitest';
import { liveRoutes } from '../../functions/api/routes.js';
import { synthService } from './service-template.js';

interface Method {
  Properties: { OperationName: string; Integration: { Type: string; Uri: unknown; ResponseTransferMode?: string } };
}

describe('CSV routes stream', () => {
  const { template } = synthService();
  const methods = Object.values(template.findResources('AWS::ApiGateway::Method')) as Method[];
  const byOperation = new Map(methods.map((m) => [m.Properties.OperationName, m.Properties.Integration]));
  const csvRoutes = liveRoutes.filter((r) => r.csv).map((r) => r.operationId);

  it("has every list of reports and of a plan's history among the CSV routes", () => {
    expect([...csvRoutes].sort()).toEqual(
      ['getComplianceBatchDelta', 'getCompliancePlanDevice', 'getCompliancePlanTrend', 'listComplianceBatches', 'listComplianceReports'].sort(),
    );
  });

  it('invokes a CSV route’s function with response streaming, in transfer mode STREAM', () => {
    for (const operation of csvRoutes) {
      const integration = byOperation.get(operation)!;
      expect(integration.Type).toBe('AWS_PROXY');
      expect(integration.ResponseTransferMode).toBe('STREAM');
      expect(JSON.stringify(integration.Uri)).toContain('/2021-11-15/functions/');
      expect(JSON.stringify(integration.Uri)).toContain('/response-streaming-invocations');
    }
  });

  it('makes a new deployment when a route starts streaming, so that the stage serves the streaming integration', () => {
    const deploymentOf = (t: typeof template) => Object.keys(t.findResources('AWS::ApiGateway::Deployment'));
    const buffered = synthService('Netconfig', { routes: liveRoutes.map(({ csv: _csv, ...route }) => route) }).template;
    expect(deploymentOf(buffered)).toHaveLength(1);
    expect(deploymentOf(buffered)).not.toEqual(deploymentOf(template));
  });

  it('leaves every other route’s integration buffered, as before', () => {
    const others = liveRoutes.filter((r) => !r.csv);
    expect(others.length).toBeGreaterThan(0);
    for (const route of others) {
      const integration = byOperation.get(route.operationId)!;
      expect(integration.ResponseTransferMode, route.operationId).toBeUndefined();
      expect(JSON.stringify(integration.Uri), route.operationId).toContain('/2015-03-31/functions/');
    }
  });
});
