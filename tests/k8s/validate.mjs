// Validates Kubernetes manifests (multi-document YAML files) against the published schemas:
// Kubernetes' OpenAPI definitions and the Prometheus Operator's CRDs, as the npm packages
// kubernetes-models and @kubernetes-models/prometheus-operator compile them (types, required
// fields, enums, formats). Those schemas allow unknown fields, which the API server's strict
// field validation (kubectl's default) rejects; so every key is also checked against the
// properties the same packages declare for its type, and a misspelt field fails here too.
//
//   node validate.mjs FILE...      exit 0 when every object is valid; else one line per error
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
const models = {
  "apps/v1/DaemonSet": ["kubernetes-models/apps/v1/DaemonSet", "DaemonSet"],
  "v1/Service": ["kubernetes-models/v1/Service", "Service"],
  "v1/ConfigMap": ["kubernetes-models/v1/ConfigMap", "ConfigMap"],
  "monitoring.coreos.com/v1/ServiceMonitor": [
    "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor",
    "ServiceMonitor",
  ],
  "monitoring.coreos.com/v1/PrometheusRule": [
    "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule",
    "PrometheusRule",
  ],
};

// "file#Interface" -> {property: type text}, and each exported alias (IIoK8sApiCoreV1Probe, unique
// across packages, where local names such as IProbe are not) -> "file#Interface".
const interfaces = new Map();
const aliases = new Map();
function readDeclarations(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      readDeclarations(p);
    } else if (entry.name.endsWith(".d.ts")) {
      const text = fs.readFileSync(p, "utf8");
      for (const m of text.matchAll(/export interface (\w+)\s*(?:extends ([^{]+))?\{([\s\S]*?)\n\}/g)) {
        const props = {};
        for (const q of m[3].matchAll(/^\s{4}"([^"]+)"\??: ([^;]+);/gm)) props[q[1]] = q[2];
        const bases = (m[2] ?? "").split(",").map((b) => b.trim()).filter(Boolean);
        interfaces.set(`${p}#${m[1]}`, { props, bases });
      }
      for (const m of text.matchAll(/export type \{([^}]*)\}/g)) {
        for (const pair of m[1].split(",")) {
          const [from, to] = pair.split(" as ").map((s) => s.trim());
          if (from && to) aliases.set(to, `${p}#${from}`);
        }
      }
    }
  }
}
for (const pkg of ["kubernetes-models", "@kubernetes-models"]) {
  readDeclarations(path.join(here, "node_modules", pkg));
}

// The interface a property's type names (through arrays), looked up from the file it is in.
function resolve(type, file) {
  let t = type.trim();
  for (;;) {
    const arr = t.match(/^Array<(.*)>$/) || t.match(/^(.*)\[\]$/);
    if (!arr) break;
    t = arr[1].trim();
  }
  if (interfaces.has(`${file}#${t}`)) return `${file}#${t}`;
  return aliases.get(t) ?? null;
}

// Every field of an interface, its bases' (`extends`) included: name -> [type, file].
function fields(key) {
  const { props, bases } = interfaces.get(key);
  const file = key.split("#")[0];
  let out = {};
  for (const b of bases) {
    const base = resolve(b, file);
    if (base) out = { ...out, ...fields(base) };
  }
  for (const [k, t] of Object.entries(props)) out[k] = [t, file];
  return out;
}

function strictKeys(value, key, where, errors) {
  if (Array.isArray(value)) {
    value.forEach((v, i) => strictKeys(v, key, `${where}[${i}]`, errors));
    return;
  }
  if (value === null || typeof value !== "object" || !key) return;
  const all = fields(key);
  for (const [k, v] of Object.entries(value)) {
    if (!(k in all)) {
      errors.push(`${where}.${k}: not a field of ${key.split("#")[1].replace(/^I/, "")}`);
      continue;
    }
    strictKeys(v, resolve(...all[k]), `${where}.${k}`, errors);
  }
}

let failed = 0;
let checked = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of yaml.loadAll(fs.readFileSync(file, "utf8"))) {
    if (doc === null || doc === undefined) continue;
    const id = `${doc.apiVersion}/${doc.kind}`;
    const name = `${file}: ${doc.kind} ${doc.metadata?.name ?? "?"}`;
    if (!(id in models)) {
      console.log(`${name}: no schema for ${id}`);
      failed++;
      continue;
    }
    const [module, cls] = models[id];
    const Model = (await import(module))[cls];
    const errors = [];
    try {
      new Model(doc).validate();
    } catch (e) {
      errors.push(String(e.message ?? e));
    }
    const declared = path.join(here, "node_modules", module + ".d.ts");
    const top = fs.readFileSync(declared, "utf8").match(/export interface (\w+)/)[1];
    strictKeys(doc, `${declared}#${top}`, cls, errors);
    for (const e of errors) console.log(`${name}: ${e}`);
    if (errors.length) failed++;
    checked++;
  }
}
console.log(`${checked} object(s) checked, ${failed} invalid`);
process.exit(failed || checked === 0 ? 1 : 0);
