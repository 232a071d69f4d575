// One of each construct the k6 converter reads, for the wire harness:
// setup() login whose token every iteration sends, a per-user row of a
// JSON data set, group, a loop, http.batch, a form body, a query built from
// a template, a header from a response, an if on a response value, a
// weighted random branch, and sleeps fixed and random.
import http from 'k6/http';
import { check, group, sleep } from 'k6';
import { SharedArray } from 'k6/data';

const BASE = __ENV.BASE || 'http://shop.test';
const PAGE_SIZE = parseInt(__ENV.PAGE_SIZE || '20');

const users = new SharedArray('users', function () {
  return JSON.parse(open('./users.json'));
});

export const options = {
  scenarios: {
    shoppers: { executor: 'per-vu-iterations', vus: 3, iterations: 4, maxDuration: '30s' },
  },
  thresholds: {
    http_req_duration: ['p(95)<800', 'avg<400'],
    'http_req_duration{name:cart}': ['p(99)<1500'],
    http_req_failed: [{ threshold: 'rate<0.05', abortOnFail: true, delayAbortEval: '10s' }],
    checks: ['rate>0.9'],
  },
};

export function setup() {
  const res = http.post(`${BASE}/login`, JSON.stringify({ user: 'admin', role: 'setup' }), {
    headers: { 'Content-Type': 'application/json' },
  });
  check(res, { 'logged in': (r) => r.status === 200 && r.json('token') !== '' });
  return { token: res.json('token') };
}

export default function (data) {
  const user = users[__VU - 1];
  const params = { headers: { 'X-Api-Token': data.token, Accept: 'application/json' } };
  group('browse', function () {
    const list = http.get(`${BASE}/items?page=1&size=${PAGE_SIZE}&owner=${user.name}`, params);
    check(list, {
      'list ok': (r) => r.status === 200,
      'has items': (r) => r.body.includes('items'),
    });
    const first = list.json('items.0.id');
    http.get(`${BASE}/items/${first}`, { headers: { 'X-Api-Token': data.token }, tags: { name: 'item' } });
    for (let i = 0; i < 2; i++) {
      http.get(`${BASE}/ping`);
    }
  });
  const cart = http.post(`${BASE}/cart`, { item: 'item-1', qty: '2', user: user.name }, { tags: { name: 'cart' } });
  const next = cart.headers['X-Next'];
  if (cart.json().state === 'open') {
    http.put(`${BASE}/cart/${next}`, JSON.stringify({ qty: 3, gift: false, note: `for ${user.name}` }), {
      headers: { 'Content-Type': 'application/json', 'X-Api-Token': data.token },
    });
  }
  if (Math.random() < 0.5) {
    http.del(`${BASE}/cart/${next}`);
  } else {
    http.patch(`${BASE}/cart/${next}`, 'touch');
  }
  http.batch([
    ['GET', `${BASE}/static/a.css`],
    ['GET', `${BASE}/static/b.js`],
  ]);
  sleep(0.2);
  sleep(Math.random() * 0.2);
}
