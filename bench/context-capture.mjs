// What it costs to keep a call's async context for a later settlement, and which ways keep it.
//
//   node bench/context-capture.mjs
//
// A call's attempt can be lost to a timer or an abort that fires in someone else's async context
// (the timer wheel is shared by every request). Its settlement — events, give-up, the next
// attempt, which runs the caller's operation — must run in the call's own context, so the call
// keeps a way back to it from the start. Printed, per call (CPU ns, a loop awaiting each):
// - `await`: the loop alone, awaiting a plain value;
// - `resolved`: awaiting an already-resolved promise;
// - `resolved.then`: the same with one reaction on it (what `downstream().call` adds per call:
//   `.then(resumeLost)`, whose reaction runs in the context it was registered in);
// - `snapshot`: `AsyncLocalStorage.snapshot()`, the platform's way to capture a context.
// Then in which context a promise resolved with a thenable runs that thenable's `then`: if it
// were the promise's creator's on every runtime, a lost attempt could resolve the call's own
// promise with one and need no reaction on the success path.
import { AsyncLocalStorage } from 'node:async_hooks';

const N = 1_000_000;
const identity = (v) => v;
let kept;

async function perCall(name, make) {
  let ns = 0;
  for (let round = 0; round < 3; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < N; i++) await make();
    const used = process.cpuUsage(start);
    ns = ((used.user + used.system) * 1000) / N;
  }
  console.log(`  ${name.padEnd(14)} ${ns.toFixed(1).padStart(8)} ns`);
}

console.log(`node ${process.version}, CPU ns per call (third of three rounds of ${N})`);
await perCall('await', () => 1);
await perCall('resolved', () => Promise.resolve(1));
await perCall('resolved.then', () => Promise.resolve(1).then(identity));
await perCall('snapshot', () => {
  kept = AsyncLocalStorage.snapshot();
  return 1;
});
void kept;

const storage = new AsyncLocalStorage();
let resolveMade;
let made;
storage.run('creator', () => {
  made = new Promise((resolve) => {
    resolveMade = resolve;
  });
});
const seen = await new Promise((done) => {
  storage.run('resolver', () =>
    setTimeout(() =>
      resolveMade({
        // biome-ignore lint/suspicious/noThenProperty: the thenable under test
        then(resolve) {
          done(storage.getStore());
          resolve(1);
        },
      }),
    ),
  );
});
await made;
console.log(`  a thenable's then runs in the ${seen}'s context`);
