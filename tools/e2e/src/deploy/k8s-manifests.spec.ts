import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig, readRuntimeEnv, type ServiceName } from '@relaygram/config';
import { RELAYGRAM_ENV } from './relaygram-env';

const K8S = join(__dirname, '..', '..', '..', '..', 'deploy', 'k8s');

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  // Each kind checked below reads the fields it knows.
  spec?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

const files = readdirSync(K8S).filter((f) => f.endsWith('.yaml'));
const manifests: Manifest[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(K8S, file), 'utf8')).map((doc) => {
    expect(doc.errors).toEqual([]);
    return doc.toJS() as Manifest;
  }),
);
const byKind = (kind: string) => manifests.filter((m) => m.kind === kind);
const named = (kind: string, name: string) => {
  const found = byKind(kind).find((m) => m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};

const APPS = { ingress: 3000, gateway: 3001, dispatcher: 3002 } as const;

interface Container {
  name: string;
  image: string;
  ports: { name: string; containerPort: number }[];
  env: { name: string; value: string }[];
  envFrom: { secretRef: { name: string } }[];
  volumeMounts: { name: string; mountPath: string }[];
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  startupProbe?: { httpGet: { path: string; port: string } };
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: { allowPrivilegeEscalation: boolean };
}

describe('deploy/k8s', () => {
  it('parses, and names every object after Relaygram with its labels', () => {
    expect(files.sort()).toEqual([
      'configmap.yaml',
      'dispatcher.yaml',
      'gateway.yaml',
      'ingress.yaml',
      'kustomization.yaml',
      'secret.template.yaml',
    ]);
    for (const m of manifests.filter((x) => x.kind !== 'Kustomization')) {
      expect(m.metadata.name).toMatch(/^relaygram-/);
      expect(m.metadata.labels?.['app.kubernetes.io/name']).toBe('relaygram');
    }
  });

  describe.each(Object.entries(APPS))('the %s Deployment', (app, port) => {
    const deployment = named('Deployment', `relaygram-${app}`);
    const pod = deployment.spec.template;
    const [container] = pod.spec.containers as Container[];
    const env = Object.fromEntries(container.env.map((e) => [e.name, e.value]));
    const portNamed = (name: string) => container.ports.find((p) => p.name === name)?.containerPort;

    it('selects its own pods', () => {
      expect(deployment.spec.selector.matchLabels).toEqual({
        'app.kubernetes.io/name': 'relaygram',
        'app.kubernetes.io/component': app,
      });
      expect(pod.metadata.labels).toEqual(deployment.spec.selector.matchLabels);
      expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    });

    it('runs its image on its ports, the management listener open to Prometheus', () => {
      expect(container.image).toMatch(new RegExp(`^relaygram-${app}:`));
      expect(portNamed('http')).toBe(port);
      expect(portNamed('management')).toBe(port + 100);
      expect(env.PORT).toBe(String(port));
      expect(env.ADMIN_PORT).toBe(String(port + 100));
      expect(env.ADMIN_HOST).toBe('0.0.0.0');
      expect(pod.metadata.annotations).toEqual({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(port + 100),
        'prometheus.io/path': '/metrics',
      });
    });

    it('probes liveness on /health/live and readiness on /health/ready', () => {
      expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });
      expect(container.startupProbe?.httpGet).toEqual({ path: '/health/live', port: 'http' });
    });

    it('sets only variables Relaygram reads, and Relaygram reads them as meant', () => {
      expect(Object.keys(env).filter((name) => !RELAYGRAM_ENV.includes(name))).toEqual([]);
      expect(readRuntimeEnv(app as ServiceName, env)).toMatchObject({
        port,
        adminPort: port + 100,
        adminHost: '0.0.0.0',
        configPath: '/etc/relaygram/relaygram.yaml',
      });
    });

    it('reads the config from the ConfigMap and secrets from the Secret', () => {
      const mount = container.volumeMounts.find((m) => m.mountPath === '/etc/relaygram');
      const volume = pod.spec.volumes.find((v: { name: string }) => v.name === mount?.name);
      expect(volume.configMap.name).toBe('relaygram-config');
      expect(Object.keys(named('ConfigMap', 'relaygram-config').data ?? {})).toEqual([
        'relaygram.yaml',
      ]);
      expect(container.envFrom).toEqual([{ secretRef: { name: 'relaygram-secrets' } }]);
    });

    it('has resources, runs unprivileged, and gets time to finish its work', () => {
      expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory']);
      expect(Object.keys(container.resources.limits).sort()).toEqual(['cpu', 'memory']);
      expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
      // Apps give in-flight work 25 s after SIGTERM.
      expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(25);
    });

    it('has a PodDisruptionBudget over its pods', () => {
      const pdb = named('PodDisruptionBudget', `relaygram-${app}`);
      expect(pdb.apiVersion).toBe('policy/v1');
      expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
      expect(pdb.spec.minAvailable).toBe(1);
    });
  });

  it('exposes ingress and gateway through Services on their http port', () => {
    expect(
      byKind('Service')
        .map((s) => s.metadata.name)
        .sort(),
    ).toEqual(['relaygram-gateway', 'relaygram-ingress']);
    for (const app of ['ingress', 'gateway']) {
      const service = named('Service', `relaygram-${app}`);
      expect(service.spec.selector).toEqual(
        named('Deployment', `relaygram-${app}`).spec.selector.matchLabels,
      );
      expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }]);
    }
  });

  it('scales the dispatcher with a HorizontalPodAutoscaler on CPU', () => {
    const hpa = named('HorizontalPodAutoscaler', 'relaygram-dispatcher');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'relaygram-dispatcher',
    });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    // Utilization is relative to the request: without one the HPA cannot work.
    const [container] = named('Deployment', 'relaygram-dispatcher').spec.template.spec.containers;
    expect(container.resources.requests.cpu).toBeDefined();
  });

  it('ships a valid relaygram.yaml whose every secret the Secret template holds', () => {
    const yaml = named('ConfigMap', 'relaygram-config').data!['relaygram.yaml'];
    const secret = named('Secret', 'relaygram-secrets');
    expect(secret.stringData?.ADMIN_TOKEN).toBeDefined();
    expect(secret.stringData?.REDIS_URL).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'relaygram-k8s-'));
    try {
      const path = join(dir, 'relaygram.yaml');
      writeFileSync(path, yaml);
      const loaded = loadConfig({ path, noEnv: true });
      expect(loaded).toMatchObject({ ok: true });
      // Every `*_env` name in the config is a key of the Secret.
      const names = [...yaml.matchAll(/_env:\s*([A-Z0-9_]+)/g)].map((m) => m[1]);
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((name) => !(name in (secret.stringData ?? {})))).toEqual([]);
      // On Redis Cluster the prefix must be a hash tag.
      expect((parse(yaml) as { redis: { prefix: string } }).redis.prefix).toBe('{relaygram}');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('applies everything but the Secret template with kustomize', () => {
    const kustomization = manifests.find((m) => m.kind === 'Kustomization') as unknown as {
      resources: string[];
      images: { name: string }[];
    };
    expect(kustomization.resources.sort()).toEqual(
      files.filter((f) => f !== 'kustomization.yaml' && f !== 'secret.template.yaml').sort(),
    );
    expect(kustomization.images.map((i) => i.name).sort()).toEqual(
      byKind('Deployment')
        .map((d) => d.spec.template.spec.containers[0].image.split(':')[0])
        .sort(),
    );
  });
});
