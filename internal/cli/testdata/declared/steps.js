// A step test in the open model: k6's ramping-arrival-rate, two holds
// (5 then 10 iterations a second) with ramps before each. Written for
// plateau's test of declared phases (TestRunK6DeclaredPhases).
import http from 'k6/http';

export const options = {
  scenarios: {
    steps: {
      executor: 'ramping-arrival-rate',
      startRate: 0,
      timeUnit: '1s',
      preAllocatedVUs: 4,
      maxVUs: 20,
      stages: [
        { target: Number(__ENV.LOW || 5), duration: '1s' },
        { target: Number(__ENV.LOW || 5), duration: '7s' },
        { target: 10, duration: '1s' },
        { target: 10, duration: '7s' },
      ],
    },
  },
};

export default function () {
  http.get(`${__ENV.BASE}/step`);
}
