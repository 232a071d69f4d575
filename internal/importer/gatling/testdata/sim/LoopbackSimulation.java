// TestRealGatling's simulation (written for plateau's tests): 20 users
// arriving over 3 s, each a GET, a POST in a group and a request whose
// status check fails, against a loopback server given as -Dbase=URL.
package sim;

import static io.gatling.javaapi.core.CoreDsl.*;
import static io.gatling.javaapi.http.HttpDsl.*;

import io.gatling.javaapi.core.*;
import io.gatling.javaapi.http.*;

public class LoopbackSimulation extends Simulation {
  HttpProtocolBuilder httpProtocol = http.baseUrl(System.getProperty("base"));
  ScenarioBuilder scn = scenario("shop")
      .exec(http("home").get("/"))
      .group("checkout").on(exec(http("pay").post("/pay").check(status().is(200))))
      .exec(http("missing").get("/missing").check(status().is(404)));
  {
    setUp(scn.injectOpen(rampUsers(20).during(3))).protocols(httpProtocol);
  }
}
