// The SDK against a live server (RUCKUS_URL, RUCKUS_TOKEN) and a fleet
// manifest (RUCKUS_FLEET_MANIFEST) whose targets agents serve: started by
// e2e/sdk_test.go, which also reads what this prints.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";

import { FleetClient, FleetError, type FleetReport } from "../src/index.js";

const url = process.env.RUCKUS_URL;
const token = process.env.RUCKUS_TOKEN;
const manifestPath = process.env.RUCKUS_FLEET_MANIFEST;
const live = url !== undefined && token !== undefined && manifestPath !== undefined;

test("a fleet through the SDK: dry run, refusal, submit, wait, report", { skip: live ? false : "RUCKUS_URL, RUCKUS_TOKEN and RUCKUS_FLEET_MANIFEST are not set (e2e/sdk_test.go sets them)" }, async () => {
  const client = new FleetClient({ baseUrl: url!, token: token! });
  const manifest = await readFile(manifestPath!, "utf8");

  const plan = await client.dryRunFleet(manifest);
  assert.ok(plan.runs.length > 0);
  for (const r of plan.runs) {
    assert.match(r.fleet_run_id, new RegExp(`^${plan.name}-\\d{8}T\\d{6}Z-[0-9a-f]{12}$`));
  }

  await assert.rejects(client.dryRunFleet(manifest.replace(/"adapter":\s*"native"/, '"adapter": "generic"')), (err: unknown) => {
    assert.ok(err instanceof FleetError);
    assert.equal(err.status, 422);
    assert.equal(err.errors[0]?.path, "repositories[0].adapter");
    return true;
  });

  const fleet = await client.submitFleet(manifest);
  assert.equal(fleet.runs.length, plan.runs.length);
  let polls = 0;
  const report: FleetReport = await client.waitForCompletion(fleet.fleetId, {
    intervalMs: 250,
    timeoutMs: 120_000,
    onProgress: () => {
      polls++;
    },
  });
  assert.ok(polls >= 1);
  assert.equal(report.active, 0);
  assert.equal(report.fleet_id, fleet.fleetId);
  const s = report.summary;
  assert.equal(s.total_pending, 0);
  assert.equal(s.total_tests, s.total_succeeded + s.total_failed + s.total_timeout + s.total_skipped);
  assert.ok(s.total_succeeded > 0);
  assert.ok(s.p50_duration_ms !== null && s.p95_duration_ms !== null && s.p50_duration_ms <= s.p95_duration_ms);
  assert.equal(report.rows.length, fleet.runs.length);

  const summaryCSV = await client.getCSV(fleet.fleetId, "summary");
  assert.match(summaryCSV, /^fleet_id,name,total_repositories,total_tests,/);
  const dashboard = await client.getDashboard(fleet.fleetId);
  assert.match(dashboard, /<svg/);
  assert.doesNotMatch(dashboard, /<script/);

  // What the Go side checks, and the report shows.
  console.log(
    "SDK-REPORT " +
      JSON.stringify({
        fleet_id: report.fleet_id,
        name: report.name,
        runs: report.runs,
        completed: report.completed,
        summary: s,
        providers: report.providers.map((p) => ({ provider: p.provider, tests: p.total_tests, succeeded: p.total_succeeded, cost: p.cost })),
        failures: report.failures,
      }),
  );
});
