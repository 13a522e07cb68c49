// Ruckus's fleet SDK: submit a fleet manifest (Ruckus's dialect or the
// fleet benchmarking document's), wait for the fleet to finish and read its
// report, typed from the server's OpenAPI description (src/schema.ts is
// generated from handlers/openapi.yaml by openapi-typescript; requests go
// through openapi-fetch).
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths } from "./schema.js";

/** A fleet's report: the document's summary, breakdowns, rows, failures. */
export type FleetReport = components["schemas"]["FleetReport"];
/** The fleet document's summary metrics. */
export type FleetSummary = components["schemas"]["FleetSummary"];
/** One run a manifest creates (or would create, in a dry run). */
export type FleetPlannedRun = components["schemas"]["FleetPlannedRun"];
/** A CSV table of the report. */
export type FleetTable = "summary" | "repositories" | "providers" | "categories" | "runs";

/** A field the server refused, by its path in the manifest's own dialect. */
export interface FieldError {
  path: string;
  message: string;
}

/** The server's refusal: its status, and the fields that are wrong (422). */
export class FleetError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
    this.name = "FleetError";
  }
}

export interface FleetClientOptions {
  /** The server, such as http://localhost:8080 (the API is under /api/v1). */
  baseUrl: string;
  /** An API token (Settings, or `ruckus token create`). */
  token: string;
  /** fetch to use; the global one by default. */
  fetch?: typeof fetch;
}

/** What a submitted fleet is. */
export interface SubmittedFleet {
  fleetId: number;
  name: string;
  submittedAt: string;
  benchmarkIds: number[];
  runs: FleetPlannedRun[];
}

/** What a dry run answers: the runs, with the ids they would have now. */
export interface FleetPlan {
  name: string;
  submittedAt: string;
  runs: FleetPlannedRun[];
}

export interface WaitOptions {
  /** How often to read the report (ms); 2000 by default. */
  intervalMs?: number;
  /** Give up after this long (ms); no limit by default. */
  timeoutMs?: number;
  /** Called with each report read while waiting. */
  onProgress?: (report: FleetReport) => void;
  signal?: AbortSignal;
}

/** A manifest: its text (YAML or JSON) or an object (sent as JSON). */
export type Manifest = string | Record<string, unknown>;

/** A client of one Ruckus server's fleets. */
export class FleetClient {
  readonly api: Client<paths>;
  private readonly baseUrl: string;
  private readonly token: string;
  private readonly fetcher: typeof fetch;

  constructor(opts: FleetClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.token = opts.token;
    this.fetcher = opts.fetch ?? globalThis.fetch;
    this.api = createClient<paths>({
      baseUrl: this.baseUrl + "/api/v1",
      headers: { Authorization: `Bearer ${opts.token}` },
      fetch: this.fetcher,
    });
  }

  /** Validates a manifest and answers the runs it would create. */
  async dryRunFleet(manifest: Manifest): Promise<FleetPlan> {
    const body = await this.postManifest(manifest, true);
    return { name: String(body.name), submittedAt: String(body.submitted_at), runs: body.runs as FleetPlannedRun[] };
  }

  /** Submits a manifest: the fleet's benchmarks and runs are queued. */
  async submitFleet(manifest: Manifest): Promise<SubmittedFleet> {
    const body = await this.postManifest(manifest, false);
    return {
      fleetId: Number(body.fleet_id),
      name: String(body.name),
      submittedAt: String(body.submitted_at),
      benchmarkIds: body.benchmark_ids as number[],
      runs: body.runs as FleetPlannedRun[],
    };
  }

  private async postManifest(manifest: Manifest, dryRun: boolean): Promise<Record<string, unknown>> {
    const text = typeof manifest === "string" ? manifest : JSON.stringify(manifest);
    const { data, error, response } = await this.api.POST("/fleets", {
      params: { query: { dry_run: dryRun } },
      // The server reads YAML or JSON (JSON is YAML): the text goes as it is.
      body: text as never,
      bodySerializer: (b: unknown) => b as string,
      headers: { "Content-Type": "application/yaml" },
    });
    if (error !== undefined || data === undefined) {
      throw refusal(response, error);
    }
    return data as Record<string, unknown>;
  }

  /** The fleet's report now. */
  async getReport(fleetId: number): Promise<FleetReport> {
    const { data, error, response } = await this.api.GET("/fleets/{id}/report", {
      params: { path: { id: fleetId }, query: { format: "json" } },
    });
    if (error !== undefined || data === undefined) {
      throw refusal(response, error);
    }
    return data as FleetReport;
  }

  /** Waits until no run of the fleet is queued or running; its last report. */
  async waitForCompletion(fleetId: number, opts: WaitOptions = {}): Promise<FleetReport> {
    const interval = opts.intervalMs ?? 2000;
    const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
    for (;;) {
      opts.signal?.throwIfAborted();
      const report = await this.getReport(fleetId);
      opts.onProgress?.(report);
      if (report.active === 0) {
        return report;
      }
      if (Date.now() + interval > deadline) {
        throw new FleetError(`fleet ${fleetId} still has ${report.active} run(s) active after ${opts.timeoutMs} ms`, 0);
      }
      await sleep(interval, opts.signal);
    }
  }

  /** One of the report's CSV tables (the fleet document's four, or the runs'). */
  async getCSV(fleetId: number, table: FleetTable): Promise<string> {
    return this.text(`/api/v1/fleets/${fleetId}/report?format=csv&table=${table}`);
  }

  /** The report as a self-contained HTML dashboard. */
  async getDashboard(fleetId: number): Promise<string> {
    return this.text(`/api/v1/fleets/${fleetId}/report.html`);
  }

  private async text(path: string): Promise<string> {
    const res = await this.fetcher(this.baseUrl + path, { headers: { Authorization: `Bearer ${this.token}` } });
    if (!res.ok) {
      let body: unknown;
      try {
        body = await res.json();
      } catch {
        body = undefined;
      }
      throw refusal(res, body);
    }
    return res.text();
  }
}

function refusal(response: Response, error: unknown): FleetError {
  const body = (error ?? {}) as { error?: string; errors?: FieldError[] };
  const errors = Array.isArray(body.errors) ? body.errors : [];
  const detail = errors.length > 0 ? errors.map((e) => `${e.path}: ${e.message}`).join("; ") : (body.error ?? response.statusText);
  return new FleetError(`the server answered ${response.status}: ${detail}`, response.status, errors);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
