// The k6 fixtures' script: two scenarios (2 VUs for SECONDS (6) s, 2 more
// for the second half) against a loopback server (testServer in
// real_test.go: /cart, /pay, /flaky answering 500 every 5th time,
// /items/N); a group, a named URL pattern, a check, and a refused
// connection every 10th iteration.
// k6-v1.8.1/ was made with
//   BASE=http://127.0.0.1:PORT k6 run --out json=out.json.gz --summary-export=summary.json script.js
import http from 'k6/http';
import { check, group, sleep } from 'k6';

const BASE = __ENV.BASE;
const SECONDS = Number(__ENV.SECONDS || 6);

export const options = {
  scenarios: {
    base: { executor: 'constant-vus', vus: 2, duration: `${SECONDS}s` },
    extra: { executor: 'constant-vus', vus: 2, duration: `${SECONDS / 2}s`, startTime: `${SECONDS / 2}s` },
  },
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
};

export default function () {
  group('shop', () => {
    http.get(`${BASE}/cart`);
    http.post(`${BASE}/pay`, 'x', { tags: { name: 'pay' } });
  });
  const r = http.get(`${BASE}/flaky`);
  check(r, { 'status 200': (res) => res.status === 200 });
  http.get(`${BASE}/items/${__ITER}`, { tags: { name: `${BASE}/items/{id}` } });
  if (__ITER % 10 === 0) {
    http.get('http://127.0.0.1:1/down', { timeout: '1s' });
  }
  sleep(0.3);
}
