# The Locust fixtures' locustfile: 2 users for STEP_SECONDS (4) s, then 4
# users as long (a LoadTestShape), against a loopback server (testServer in
# real_test.go: /cart, /pay, /flaky answering 500 every 5th time,
# /items/N), with a named URL pattern and a refused connection now and then.
# locust-2.47.0/ was made with
#   locust -f locustfile.py --headless -H http://127.0.0.1:PORT --csv run --csv-full-history --only-summary
import itertools
import os

from locust import HttpUser, LoadTestShape, constant, task

counter = itertools.count()


class Shopper(HttpUser):
    wait_time = constant(0.2)

    @task(3)
    def cart(self):
        self.client.get("/cart")

    @task(2)
    def pay(self):
        self.client.post("/pay", data="x", name="pay")

    @task(2)
    def flaky(self):
        self.client.get("/flaky")

    @task(2)
    def item(self):
        self.client.get(f"/items/{next(counter)}", name="/items/[id]")

    @task(1)
    def down(self):
        if next(counter) % 3 == 0:
            self.client.get("http://127.0.0.1:1/down", name="down")


STEP = float(os.environ.get("STEP_SECONDS", "4"))


class Steps(LoadTestShape):
    def tick(self):
        t = self.get_run_time()
        if t < STEP:
            return (2, 10)
        if t < 2 * STEP:
            return (4, 10)
        return None
