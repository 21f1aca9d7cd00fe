/**
 * Per-key lanes (docs/guide.md, "Per-key lanes"): a call chooses its breaker / bulkhead /
 * pacer lane with `key` and its retry budget with `budgetKey`.
 *
 * Run: npx tsx examples/guide-lanes.ts
 */
// #region readme
import { downstream } from 'kindly-calls';

const orders = downstream('orders', { breaker: true });
const placeOrder = async () => ({ id: 'o_1' }); // your operation

const order = await orders.call(placeOrder, { key: 'eu-west', budgetKey: 'orders:write' });
console.log(order, orders.breakerState('eu-west')); // { id: 'o_1' } closed
// #endregion
