import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import type { IDeployment, IStatefulSet } from "kubernetes-models/apps/v1";
import type { IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import type { IJob } from "kubernetes-models/batch/v1";
import type { INetworkPolicy, INetworkPolicyPeer, INetworkPolicyPort } from "kubernetes-models/networking.k8s.io/v1";
import type { IPodDisruptionBudget } from "kubernetes-models/policy/v1";
import type { IConfigMap, IContainer, IPodSpec, ISecret, IService, IServiceAccount } from "kubernetes-models/v1";
import { parseAllDocuments } from "yaml";

// Every overlay as `kubectl kustomize` renders it (no cluster needed), each object checked
// against the Kubernetes schemas shipped by kubernetes-models (offline), then what operators rely
// on: probes, resources, securityContext, accounts, secrets, network reach, pinned images.

const run = promisify(execFile);
const overlaysDirectory = fileURLToPath(new URL("../overlays", import.meta.url));
const overlays = readdirSync(overlaysDirectory).sort();

const PROCESSES = ["gateway", "subscribers", "integrations", "topics", "triggers", "messages", "worker"] as const;
type Process = (typeof PROCESSES)[number];
const NOTIFY_PODS = [...PROCESSES, "migrate"];

/** Who calls whom, from each process's *_URL variables (services/<name>/src/config.ts). */
const RPC_PORTS: Partial<Record<Process, number>> = { subscribers: 50051, integrations: 50052, topics: 50053, triggers: 50054, messages: 50055 };
/** Where each process serves /metrics: the RPC port + 1000 (runtime metricsPortOf), the worker's health port. */
const METRICS_PORTS: Record<Process, number> = {
  gateway: 4000,
  subscribers: 51051,
  integrations: 51052,
  topics: 51053,
  triggers: 51054,
  messages: 51055,
  worker: 50060,
};
const CALLERS: Partial<Record<Process, Process[]>> = {
  subscribers: ["gateway", "worker", "topics", "messages"],
  integrations: ["gateway", "worker", "subscribers"],
  topics: ["gateway", "worker"],
  triggers: ["gateway", "worker", "subscribers", "messages"],
  messages: ["gateway", "worker"],
};

/** What each process's Secret holds: the encryption keys only where they are used. */
const SECRET_KEYS: Record<string, string[]> = {
  gateway: ["BOOTSTRAP_API_KEY", "DATABASE_URL", "GATEWAY_ENCRYPTION_KEY"],
  integrations: ["DATABASE_URL", "INTEGRATIONS_ENCRYPTION_KEY"],
  subscribers: ["DATABASE_URL"],
  topics: ["DATABASE_URL"],
  triggers: ["DATABASE_URL"],
  messages: ["DATABASE_URL"],
  worker: ["DATABASE_URL"],
  migrate: ["DATABASE_URL"],
};

/** What every rendered object has; each is narrowed to its kind's model type once it validated. */
interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string };
}

async function render(overlay: string): Promise<KubeObject[]> {
  const { stdout } = await run("kubectl", ["kustomize", `${overlaysDirectory}/${overlay}`], { maxBuffer: 16 * 2 ** 20 });
  return parseAllDocuments(stdout).map((document) => document.toJS() as KubeObject);
}

type Model = new (data: unknown) => { validate(): void };

/** The kubernetes-models class of an object's apiVersion and kind (core objects live under `v1`). */
async function modelOf(object: KubeObject): Promise<Model> {
  const module = (await import(`kubernetes-models/${object.apiVersion}/${object.kind}`)) as Record<string, Model>;
  const model = module[object.kind];
  if (!model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  return model;
}

interface Kinds {
  Deployment: IDeployment;
  StatefulSet: IStatefulSet;
  Job: IJob;
  Service: IService;
  ServiceAccount: IServiceAccount;
  ConfigMap: IConfigMap;
  Secret: ISecret;
  NetworkPolicy: INetworkPolicy;
  HorizontalPodAutoscaler: IHorizontalPodAutoscaler;
  PodDisruptionBudget: IPodDisruptionBudget;
}
const ofKind = <K extends keyof Kinds>(objects: KubeObject[], kind: K) => objects.filter((object) => object.kind === kind) as unknown as Kinds[K][];
const nameOf = (object: { metadata?: { name?: string } }) => object.metadata?.name ?? "";
const named = <K extends keyof Kinds>(objects: KubeObject[], kind: K, name: string) => ofKind(objects, kind).find((object) => nameOf(object) === name);

type Workload = IDeployment | IStatefulSet | IJob;
const workloads = (objects: KubeObject[]): Workload[] => [...ofKind(objects, "Deployment"), ...ofKind(objects, "StatefulSet"), ...ofKind(objects, "Job")];
const appOf = (workload: Workload): string => workload.spec?.template.metadata?.labels?.app ?? "";
const notifyWorkloads = (objects: KubeObject[]) => workloads(objects).filter((workload) => NOTIFY_PODS.includes(appOf(workload)));

function podOf(workload: Workload): IPodSpec {
  const pod = workload.spec?.template.spec;
  if (!pod) throw new Error(`${nameOf(workload)} has no pod spec`);
  return pod;
}
function containerOf(workload: Workload): IContainer {
  const [container] = podOf(workload).containers;
  if (!container) throw new Error(`${nameOf(workload)} has no container`);
  return container;
}
function deploymentOf(objects: KubeObject[], process: Process): IDeployment {
  const deployment = named(objects, "Deployment", process);
  if (!deployment) throw new Error(`no Deployment ${process}`);
  return deployment;
}
const configOf = (objects: KubeObject[]) => named(objects, "ConfigMap", "notify-config")?.data ?? {};

type LabelSelector = NonNullable<INetworkPolicy["spec"]>["podSelector"];

/** Whether a label selector (matchLabels, matchExpressions with In) selects a pod labelled `labels`. */
function selects(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpressions = (selector.matchExpressions ?? []).every((expression) => {
    if (expression.operator !== "In") throw new Error(`unhandled operator ${expression.operator}`);
    return (expression.values ?? []).includes(labels[expression.key] ?? "");
  });
  return byLabels && byExpressions;
}

/** A peer of the connection: a notify pod of this namespace, or an address outside the cluster. */
type Peer = { app: string } | { address: string };

function ipv4InBlock(address: string, cidr: string): boolean {
  const [network, bits] = cidr.split("/");
  if (!network || network.includes(":") || address.includes(":")) return false;
  const toNumber = (ip: string) => ip.split(".").reduce((value, part) => value * 256 + Number(part), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toNumber(address) / size) === Math.floor(toNumber(network) / size);
}

function peerMatches(peers: INetworkPolicyPeer[] | undefined, peer: Peer): boolean {
  if (!peers || peers.length === 0) return true;
  return peers.some((entry) => {
    if ("app" in peer) return entry.namespaceSelector === undefined && selects(entry.podSelector, { app: peer.app });
    if (!entry.ipBlock) return false;
    const { cidr, except = [] } = entry.ipBlock;
    return ipv4InBlock(peer.address, cidr) && !except.some((range) => ipv4InBlock(peer.address, range));
  });
}

const portMatches = (ports: INetworkPolicyPort[] | undefined, port: number) => !ports || ports.length === 0 || ports.some((entry) => entry.port === port);

/** NetworkPolicy semantics: traffic in one direction is allowed if no policy isolates the pod, or one of those that do allows it. */
function allowed(policies: INetworkPolicy[], direction: "Ingress" | "Egress", pod: string, peer: Peer, port: number): boolean {
  const isolating = policies.filter((policy) => policy.spec?.policyTypes?.includes(direction) && selects(policy.spec.podSelector, { app: pod }));
  if (isolating.length === 0) return true;
  return isolating.some((policy) =>
    direction === "Ingress"
      ? (policy.spec?.ingress ?? []).some((rule) => portMatches(rule.ports, port) && peerMatches(rule.from, peer))
      : (policy.spec?.egress ?? []).some((rule) => portMatches(rule.ports, port) && peerMatches(rule.to, peer)),
  );
}

/** Whether `from` may open a connection to `to` on `port`: the sender's egress and the receiver's ingress must both allow it. */
const reaches = (policies: INetworkPolicy[], from: string, to: string, port: number) =>
  allowed(policies, "Egress", from, { app: to }, port) && allowed(policies, "Ingress", to, { app: from }, port);

const rendered = new Map<string, KubeObject[]>();
beforeAll(async () => {
  for (const overlay of overlays) rendered.set(overlay, await render(overlay));
});
const objectsOf = (overlay: string) => rendered.get(overlay) ?? [];

it("has a dev and a production overlay", () => {
  expect(overlays).toEqual(expect.arrayContaining(["dev", "production"]));
});

describe.each(overlays)("overlay %s", (overlay) => {
  it("renders objects that all validate against the Kubernetes schemas", async () => {
    const objects = objectsOf(overlay);
    expect(objects.length).toBeGreaterThan(20);
    for (const object of objects) {
      const Model = await modelOf(object);
      expect(() => new Model(object).validate(), `${object.kind} ${nameOf(object)}`).not.toThrow();
    }
  });

  it("runs every process and the migrate Job", () => {
    const objects = objectsOf(overlay);
    for (const process of PROCESSES) expect(deploymentOf(objects, process)).toBeDefined();
    expect(ofKind(objects, "Job").map(appOf)).toEqual(["migrate"]);
  });

  it("pins every image to a tag, never latest, and runs one notify image throughout", () => {
    const images = workloads(objectsOf(overlay)).flatMap((workload) => podOf(workload).containers.map((container) => container.image ?? ""));
    for (const image of images) {
      expect(image, image).toMatch(/^[^:@]+(:[\w.-]+)(@sha256:[0-9a-f]{64})?$/);
      expect(image, image).not.toMatch(/:latest\b/);
    }
    const notifyImages = new Set(notifyWorkloads(objectsOf(overlay)).map((workload) => containerOf(workload).image));
    expect(notifyImages.size).toBe(1);
    expect([...notifyImages][0]).toMatch(/^ghcr\.io\/notify\/notify:/);
  });

  it("names the migrate Job after its image tag, so a new image applies as a new Job", () => {
    const [job] = ofKind(objectsOf(overlay), "Job");
    if (!job) throw new Error("no migrate Job");
    const tag = containerOf(job).image?.split(":")[1];
    expect(nameOf(job)).toBe(`notify-migrate-${tag}`);
    expect(containerOf(job).command).toEqual(["node", "migrate/dist/migrate.js"]);
    expect(job.spec?.ttlSecondsAfterFinished).toBeGreaterThan(0);
  });

  it("sets resources and a locked-down securityContext on every pod and container", () => {
    for (const workload of workloads(objectsOf(overlay))) {
      const pod = podOf(workload);
      const name = `${workload.kind} ${nameOf(workload)}`;
      expect(pod.automountServiceAccountToken, name).toBe(false);
      expect(pod.securityContext, name).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
      for (const container of pod.containers) {
        expect(container.securityContext, name).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        });
        expect(Object.keys(container.resources?.requests ?? {}).sort(), name).toEqual(["cpu", "memory"]);
        expect(container.resources?.limits?.memory, name).toBeDefined();
      }
    }
  });

  it("runs notify's pods as the image's user, each process under its own ServiceAccount without a token", () => {
    const objects = objectsOf(overlay);
    const accounts = new Set<string>();
    for (const workload of notifyWorkloads(objects)) {
      const pod = podOf(workload);
      expect(pod.securityContext?.runAsUser).toBe(1000);
      expect(containerOf(workload).securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } });
      const account = pod.serviceAccountName ?? "";
      expect(account).toBe(appOf(workload));
      accounts.add(account);
      expect(named(objects, "ServiceAccount", account)?.automountServiceAccountToken).toBe(false);
    }
    expect(accounts.size).toBe(NOTIFY_PODS.length);
  });

  it("probes every process: start-up long enough for migrations, readiness and liveness on reachable ports", () => {
    const objects = objectsOf(overlay);
    for (const process of PROCESSES) {
      const { startupProbe, readinessProbe, livenessProbe, ports } = containerOf(deploymentOf(objects, process));
      if (!startupProbe || !readinessProbe || !livenessProbe) throw new Error(`${process} lacks a probe`);
      expect((startupProbe.periodSeconds ?? 10) * (startupProbe.failureThreshold ?? 3), process).toBeGreaterThanOrEqual(300);
      const port = RPC_PORTS[process];
      if (port !== undefined) {
        for (const probe of [startupProbe, readinessProbe, livenessProbe]) expect(probe.grpc, process).toEqual({ port });
        expect(ports).toEqual([
          { name: "grpc", containerPort: port },
          { name: "metrics", containerPort: METRICS_PORTS[process] },
        ]);
      }
    }
    const gateway = containerOf(deploymentOf(objects, "gateway"));
    // Readiness is the gateway's own: a dependency outage is answered per request, not by leaving the Service.
    expect(gateway.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "http" });
    expect(gateway.livenessProbe?.httpGet).toEqual({ path: "/livez", port: "http" });

    const worker = containerOf(deploymentOf(objects, "worker"));
    expect(worker.ports).toEqual([{ name: "health", containerPort: 50060 }]);
    expect(worker.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "health" });
    expect(worker.livenessProbe?.httpGet).toEqual({ path: "/livez", port: "health" });
    const config = configOf(objects);
    expect(config.WORKER_HOST).toBe("0.0.0.0");
    for (const process of Object.keys(RPC_PORTS)) expect(config[`${process.toUpperCase()}_HOST`]).toBe("0.0.0.0");
  });

  it("declares each process's metrics port for Prometheus's pod discovery, lets a labelled namespace scrape it and no one else", () => {
    const objects = objectsOf(overlay);
    const policies = ofKind(objects, "NetworkPolicy");
    for (const process of PROCESSES) {
      const deployment = deploymentOf(objects, process);
      const port = METRICS_PORTS[process];
      expect(deployment.spec?.template.metadata?.annotations, process).toEqual({
        "prometheus.io/scrape": "true",
        "prometheus.io/port": String(port),
        "prometheus.io/path": "/metrics",
      });
      expect(
        containerOf(deployment).ports?.map((entry) => entry.containerPort),
        process,
      ).toContain(port);
      const scrapers = policies.filter((policy) => selects(policy.spec?.podSelector, { app: process }) && policy.spec?.policyTypes?.includes("Ingress"));
      const scraped = scrapers.some((policy) =>
        (policy.spec?.ingress ?? []).some(
          (rule) =>
            portMatches(rule.ports, port) && (rule.from ?? []).some((peer) => peer.namespaceSelector?.matchLabels?.["notify.io/metrics-scraper"] === "true"),
        ),
      );
      expect(scraped, process).toBe(true);
      // Neither another notify pod nor an outside address reaches it.
      expect(allowed(policies, "Ingress", process, { address: "203.0.113.7" }, port), process).toBe(false);
      for (const other of NOTIFY_PODS) expect(allowed(policies, "Ingress", process, { app: other }, port), `${other} → ${process}:${port}`).toBe(false);
    }
    expect(Number(configOf(objects).SHUTDOWN_DRAIN_MS)).toBeLessThan(30_000);
  });

  it("serves each RPC service headless, so callers spread calls over every ready replica", () => {
    const objects = objectsOf(overlay);
    const config = configOf(objects);
    for (const [process, port] of Object.entries(RPC_PORTS)) {
      const service = named(objects, "Service", process);
      expect(service?.spec?.clusterIP, process).toBe("None");
      expect(service?.spec?.ports).toEqual([{ name: "grpc", port, targetPort: "grpc", appProtocol: "kubernetes.io/h2c" }]);
      expect(config[`${process.toUpperCase()}_URL`]).toBe(`http://${process}:${port}`);
    }
    expect(named(objects, "Service", "gateway")?.spec?.clusterIP).toBeUndefined();
  });

  it("gives each process a Secret of its own, and every process that makes or serves internal calls the shared internal token", () => {
    const names = new Set<string>();
    for (const workload of notifyWorkloads(objectsOf(overlay))) {
      const references = (containerOf(workload).envFrom ?? []).flatMap((source) => (source.secretRef ? [source.secretRef.name ?? ""] : []));
      const own = references.filter((name) => !/^internal-rpc-secrets(-[a-z0-9]+)?$/.test(name));
      expect(own, appOf(workload)).toHaveLength(1);
      expect(own[0]).toMatch(new RegExp(`^${appOf(workload)}-secrets(-[a-z0-9]+)?$`));
      expect(references.length - own.length, appOf(workload)).toBe(appOf(workload) === "migrate" ? 0 : 1);
      names.add(own[0] ?? "");
    }
    expect(names.size).toBe(NOTIFY_PODS.length);
  });

  describe("network policies", () => {
    const policiesOf = () => ofKind(objectsOf(overlay), "NetworkPolicy");

    it("deny everything to notify's pods but what they need", () => {
      const denyAll = policiesOf().filter((policy) => !policy.spec?.ingress && !policy.spec?.egress && policy.spec?.policyTypes?.length === 2);
      expect(denyAll.some((policy) => NOTIFY_PODS.every((app) => selects(policy.spec?.podSelector, { app })))).toBe(true);
    });

    it("open each RPC port to the processes that call it, and to no other", () => {
      for (const [service, port] of Object.entries(RPC_PORTS) as [Process, number][]) {
        for (const caller of NOTIFY_PODS) {
          const expected = (CALLERS[service] ?? []).includes(caller as Process);
          expect(reaches(policiesOf(), caller, service, port), `${caller} → ${service}:${port}`).toBe(expected);
        }
      }
    });

    it("let only the gateway be reached from outside", () => {
      const outside = { address: "203.0.113.7" };
      for (const app of NOTIFY_PODS) {
        const port = app === "gateway" ? 3000 : (RPC_PORTS[app as Process] ?? 50060);
        expect(allowed(policiesOf(), "Ingress", app, outside, port), app).toBe(app === "gateway");
      }
    });

    it("let only the worker reach the internet, and nobody cloud metadata", () => {
      for (const app of NOTIFY_PODS) {
        expect(allowed(policiesOf(), "Egress", app, { address: "93.184.216.34" }, 443), app).toBe(app === "worker");
        expect(allowed(policiesOf(), "Egress", app, { address: "169.254.169.254" }, 80), app).toBe(false);
      }
    });

    it("let the processes that use them reach Postgres, NATS and Redis, and no other", () => {
      const users: Record<string, [number, string[]]> = {
        postgres: [5432, NOTIFY_PODS],
        nats: [4222, ["gateway", "subscribers", "triggers", "messages", "worker"]],
        redis: [6379, ["gateway"]],
      };
      for (const [datastore, [port, apps]] of Object.entries(users)) {
        for (const app of NOTIFY_PODS) {
          expect(allowed(policiesOf(), "Egress", app, { app: datastore }, port), `${app} → ${datastore}`).toBe(apps.includes(app));
          expect(allowed(policiesOf(), "Egress", app, { address: "10.20.30.40" }, port), `${app} → managed ${datastore}`).toBe(apps.includes(app));
        }
      }
    });
  });
});

describe("dev overlay", () => {
  it("holds each process's secrets, the encryption keys only where they are used", () => {
    const secrets = ofKind(objectsOf("dev"), "Secret");
    for (const [process, keys] of Object.entries(SECRET_KEYS)) {
      const secret = secrets.find((candidate) => nameOf(candidate).startsWith(`${process}-secrets-`));
      expect(Object.keys(secret?.data ?? {}).sort(), process).toEqual(keys);
    }
  });
});

describe("production overlay", () => {
  it("leaves secrets to the cluster: none are rendered", () => {
    expect(ofKind(objectsOf("production"), "Secret")).toEqual([]);
  });

  it("autoscales the gateway and the worker, which leave their replica count to the autoscaler", () => {
    const objects = objectsOf("production");
    for (const process of ["gateway", "worker"] as const) {
      const autoscaler = named(objects, "HorizontalPodAutoscaler", process);
      expect(autoscaler?.spec?.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: process });
      expect(autoscaler?.spec?.minReplicas).toBeGreaterThanOrEqual(2);
      expect(deploymentOf(objects, process).spec?.replicas).toBeUndefined();
    }
  });

  it("budgets disruptions of the gateway and the worker", () => {
    const objects = objectsOf("production");
    for (const process of ["gateway", "worker"] as const) {
      const budget = named(objects, "PodDisruptionBudget", process);
      expect(budget?.spec?.maxUnavailable).toBe(1);
      expect(selects(budget?.spec?.selector, deploymentOf(objects, process).spec?.template.metadata?.labels ?? {})).toBe(true);
    }
  });
});
