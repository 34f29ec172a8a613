/**
 * A running `npm run cluster`: its services in start order, their supervision (a critical one
 * dying stops everything; a worker dying is reported), the control socket, and the start-up,
 * each service waiting for the one before to serve.
 */
import type http from 'node:http';
import { Connection } from '@temporalio/client';
import { demoSettings, type DemoSettings } from '../launcher/defaults';
import { Supervisor } from '../launcher/supervisor';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from './binaries';
import { out, type Options } from './cli';
import { NAMESPACE, NAMESPACE_RETENTION_DAYS, TEMPORAL_PORT_BLOCK, type ClusterLayout } from './config';
import { startControlServer, type ClusterStatus, type ServiceAction } from './control';
import { removeStateFiles, writeStateFile } from './leftovers';
import { setUpNamespace } from './namespace';
import { setupSchemas } from './schema';
import { fakeApiSpec, postgresSpec, temporalSpec, uiSpec, workerSpec, type ClusterSetup } from './service-specs';
import { Service, type ServiceSpec } from './services';

/** How long each start-up step took, for the banner. */
export class PhaseTimer {
  readonly began = Date.now();
  readonly phases: Array<[string, number]> = [];
  private phaseStart = this.began;

  phase(name: string): void {
    const now = Date.now();
    this.phases.push([name, (now - this.phaseStart) / 1000]);
    this.phaseStart = now;
  }
}

export class Cluster {
  readonly services: Service[] = [];
  readonly supervisor: Supervisor;
  readonly address: string;
  readonly settings: DemoSettings = demoSettings();
  readonly externalApi = process.env.SHIPPING_API_BASE_URL;
  apiUrl: string;
  readonly workers: Service[];
  private readonly postgres: Service;
  private readonly temporal: Service;
  private readonly ui: Service;
  private readonly fakeApi: Service | undefined;
  private control: http.Server | undefined;
  /** One action at a time: a restart must not interleave with a stop of the same service. */
  private actions = Promise.resolve();

  constructor(
    readonly o: Options,
    readonly layout: ClusterLayout,
    readonly setup: ClusterSetup,
    readonly timer: PhaseTimer,
  ) {
    this.supervisor = new Supervisor({
      out,
      stopAll: async () => {
        for (const s of [...this.services].reverse()) await s.stop();
      },
      cleanup: () => {
        this.control?.close();
        removeStateFiles(layout);
      },
    });
    this.supervisor.handleSignals();
    this.address = `127.0.0.1:${o.temporalPort}`;
    this.apiUrl = this.externalApi ?? `http://127.0.0.1:${o.fakeApiPort}`;
    this.postgres = this.add(postgresSpec(o, layout, setup));
    this.temporal = this.add(temporalSpec(layout, setup, this.address));
    this.ui = this.add(uiSpec(o, layout, setup));
    this.fakeApi = this.externalApi ? undefined : this.add(fakeApiSpec(o, this.settings, (url) => (this.apiUrl = url)));
    this.workers = Array.from({ length: o.workers }, (_, i) => this.add(workerSpec(i + 1, this.settings, this.address, this.apiUrl)));
  }

  private add(spec: ServiceSpec): Service {
    const service = new Service(spec, out.child, (s, why) => this.onUnexpectedExit(s, why));
    this.services.push(service);
    return service;
  }

  private onUnexpectedExit(service: Service, why: string): void {
    writeStateFile(this.layout, this.services);
    if (this.supervisor.stopping) return;
    if (service.spec.critical) void this.supervisor.shutdown(1, `${service.name} exited unexpectedly (${why}); stopping the cluster.`);
    else
      out.warn(
        `${service.name} exited (${why}); the other workers carry on. Start it again with: npm run cluster -- start ${service.name}`,
      );
  }

  status(): ClusterStatus {
    return {
      pid: process.pid,
      startedAt: new Date(this.timer.began).toISOString(),
      dataDir: this.layout.dataDir,
      temporalAddress: this.address,
      namespace: NAMESPACE,
      taskQueue: this.settings.taskQueue,
      webUi: `http://localhost:${this.o.uiPort}`,
      shippingApi: this.apiUrl,
      postgres: `127.0.0.1:${this.o.pgPort}`,
      versions: { temporalServer: TEMPORAL_SERVER_VERSION, ui: TEMPORAL_UI_VERSION, postgres: this.setup.pg.version },
      services: this.services.map((s) => s.status()),
    };
  }

  /** `npm run cluster -- status|down|restart|stop|start` reach this through the control socket. */
  async serveControl(): Promise<void> {
    this.control = await startControlServer(this.layout.controlSocket, {
      status: () => this.status(),
      service: (name, action) => {
        const result = this.actions.then(() => this.serviceAction(name, action));
        this.actions = result.then(
          () => undefined,
          () => undefined,
        );
        return result;
      },
      down: () => void this.supervisor.shutdown(0, 'Stopping (npm run cluster -- down).'),
    });
  }

  private async serviceAction(name: string, action: ServiceAction) {
    const service = this.services.find((s) => s.name === name);
    if (!service) throw new Error(`No service ${name} (services: ${this.services.map((s) => s.name).join(', ')})`);
    if (this.supervisor.stopping) throw new Error('The cluster is stopping');
    if (action !== 'start') {
      out.say(`${action === 'restart' ? 'Restarting' : 'Stopping'} ${name}`);
      await service.stop();
    }
    if (action !== 'stop') {
      if (service.alive()) throw new Error(`${name} is already ${service.state}`);
      await service.start();
      out.say(`${name} is running (pid ${service.pid})`);
    }
    writeStateFile(this.layout, this.services);
    return service.status();
  }

  /** Everything in order, each waiting for the one before to serve; a failure stops the cluster. */
  async startAll(): Promise<void> {
    try {
      await this.startPostgres();
      await this.setUpSchema();
      await this.startTemporal();
      await this.setUpNamespace();
      await this.startUi();
      await this.startFakeApi();
      await this.startWorkers();
    } catch (err) {
      await this.supervisor.shutdown(1, `Start-up failed: ${(err as Error).message}`);
    }
  }

  private async startService(s: Service): Promise<void> {
    await s.start();
    writeStateFile(this.layout, this.services);
  }

  private async startPostgres(): Promise<void> {
    const { pg, runAs } = this.setup;
    out.say(`Starting PostgreSQL ${pg.version} on 127.0.0.1:${this.o.pgPort}${runAs ? ` (as the ${runAs.user} user)` : ''}`);
    await this.startService(this.postgres);
    this.timer.phase('postgres start');
  }

  private async setUpSchema(): Promise<void> {
    const databases = await setupSchemas(this.setup.binaries.sqlTool, this.o.pgPort, this.setup.password);
    out.say(`Schema of ${databases.join(' and ')} at the server's version (temporal-sql-tool)`);
    this.timer.phase('schema');
  }

  private async startTemporal(): Promise<void> {
    const { temporalPort } = this.o;
    out.say(
      `Starting the Temporal server ${TEMPORAL_SERVER_VERSION} on ${this.address} (ports ${temporalPort}-${temporalPort + TEMPORAL_PORT_BLOCK - 1})`,
    );
    await this.startService(this.temporal);
    this.timer.phase('temporal start');
  }

  private async setUpNamespace(): Promise<void> {
    const connection = await Connection.connect({ address: this.address });
    try {
      const ns = await setUpNamespace(connection, this.layout.dataDir);
      if (ns.created) out.say(`Registered namespace ${NAMESPACE} (retention ${NAMESPACE_RETENTION_DAYS} days)`);
      if (ns.attributes.length > 0) out.say(`Registered search attributes: ${ns.attributes.join(', ')}`);
    } finally {
      await connection.close();
    }
    this.timer.phase('namespace');
  }

  private async startUi(): Promise<void> {
    out.say(`Starting the Web UI ${TEMPORAL_UI_VERSION} on http://localhost:${this.o.uiPort}`);
    await this.startService(this.ui);
    this.timer.phase('ui start');
  }

  private async startFakeApi(): Promise<void> {
    if (!this.fakeApi) return;
    await this.startService(this.fakeApi);
    // The workers learn the URL it printed (their specs were made before it started).
    for (const w of this.workers) w.spec.env.SHIPPING_API_BASE_URL = this.apiUrl;
  }

  private async startWorkers(): Promise<void> {
    out.say(`Starting ${this.workers.length} workers on task queue ${this.settings.taskQueue}`);
    // Together: each bundles the workflow code at start, which is most of their start-up time.
    await Promise.all(this.workers.map((w) => this.startService(w)));
    this.timer.phase('workers start');
  }
}
