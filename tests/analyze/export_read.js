// make test-exports: reads hvt's exports back with readers hvtrace did not write and prints
// what they found as "key value" lines for the shell to compare with the analyzer's counts.
//   node export_read.js model FILE.json        TracerBench's trace model of a Chrome trace
//   node export_read.js speedscope DIR FILE    speedscope's own importer (the release bundle
//                                              in DIR) on a Chrome trace or speedscope file
// NODE_PATH must name the node_modules that tests/analyze/export-readers.sh installed.
'use strict';
const fs = require('fs'), vm = require('vm'), path = require('path');
const [mode, a, b] = process.argv.slice(2);

function model(file) {
  const { buildModel } = require('@tracerbench/trace-model');
  const m = buildModel(JSON.parse(fs.readFileSync(file, 'utf8')));
  const n = {};
  const add = (k, v = 1) => { n[k] = (n[k] || 0) + v; };
  const names = [];
  for (const p of m.processes)
    for (const t of p.threads) {
      add('threads');
      if (t.name === undefined) add('unnamed_threads');
      for (const e of t.events) {
        // B/E that TracerBench paired become one complete event holding both
        const paired = Array.isArray(e.traceEvent), cat = [].concat(e.cat).join(',');
        if (e.ph === 'X' && paired) {
          add('slices_' + cat);
          if (cat === 'call' || cat === 'resumed') names.push(e.name);
        } else if (e.ph === 'i') add('instant_' + cat);
        else if (e.ph !== 'M') add('unpaired');
      }
    }
  for (const [k, v] of Object.entries(n)) console.log(k, v);
  if (b) fs.writeFileSync(b, names.sort().join('\n') + '\n');
}

// speedscope's release bundle is a browser app: run it in a context without a DOM (its UI
// fails to start, which is expected) after exposing the importer its file loader calls.
function speedscope(dir, file) {
  const bundle = fs.readdirSync(dir).find(f => /^speedscope-.*\.js$/.test(f));
  let src = fs.readFileSync(path.join(dir, bundle), 'utf8');
  const site = 'async function Zy(t,e){return(await jr).importProfileGroupFromBase64(t,e)}';
  if (!src.includes(site)) { console.log('error speedscope bundle: import entry not found'); process.exit(1); }
  src = src.replace(site, site + 'globalThis.__hvtImport=Zy;');
  const stub = () => {
    const p = new Proxy(function () {}, {
      get: (t, k) => (k === Symbol.toPrimitive ? () => '' : k === 'then' ? undefined : p),
      apply: () => p, construct: () => p, set: () => true,
    });
    return p;
  };
  const warnings = [];
  const cons = { log: () => {}, info: () => {}, debug: () => {}, time: () => {}, timeEnd: () => {},
                 warn: (...x) => warnings.push(x.join(' ')), error: (...x) => warnings.push(x.join(' ')) };
  const ctx = { console: cons, setTimeout, clearTimeout, TextDecoder, TextEncoder, atob, btoa, URL };
  ctx.window = ctx; ctx.self = ctx;
  for (const k of ['document', 'navigator', 'location', 'localStorage', 'requestAnimationFrame', 'matchMedia',
                   'addEventListener', 'removeEventListener', 'performance', 'Worker', 'fetch', 'HTMLElement',
                   'Element', 'Node', 'getComputedStyle', 'ResizeObserver', 'history'])
    ctx[k] = stub();
  vm.createContext(ctx);
  try { vm.runInContext(src, ctx, { filename: bundle }); } catch (e) { /* the UI, without a DOM */ }
  if (!ctx.__hvtImport) { console.log('error speedscope importer not reached'); process.exit(1); }
  ctx.__hvtImport(path.basename(file), fs.readFileSync(file).toString('base64')).then(g => {
    if (!g) { console.log('error speedscope could not import', file); process.exit(1); }
    let calls = 0, cpuCalls = 0, weight = 0;
    for (const p of g.profiles) {
      let n = 0;
      p.forEachCall(() => n++, () => {});
      if (/^CPUs \(/.test(p.getName())) cpuCalls += n; else calls += n;
      weight += p.getTotalWeight();
    }
    console.log('profiles', g.profiles.length);
    console.log('calls', calls);
    console.log('cpu_calls', cpuCalls);
    console.log('weight', weight);
    console.log('warnings', warnings.length);
    for (const w of warnings.slice(0, 5)) console.log('# warning:', w);
  }, e => { console.log('error', String(e)); process.exit(1); });
}

if (mode === 'model') model(a);
else if (mode === 'speedscope') speedscope(a, b);
else { console.error('usage: export_read.js model FILE [NAMES_OUT] | speedscope DIR FILE'); process.exit(2); }
