package steps;

import static io.gatling.javaapi.core.CoreDsl.*;
import static io.gatling.javaapi.http.HttpDsl.*;

import io.gatling.javaapi.core.*;
import io.gatling.javaapi.http.*;
import java.time.Duration;

// A step test in the open model: users arrive at a constant rate, in two
// steps with a ramp between them. Written for plateau's test of declared
// phases (TestRunGatlingDeclaredPhases); -J low=… sets the first step.
public class StepSimulation extends Simulation {
  int low = Integer.getInteger("low", 3);
  HttpProtocolBuilder httpProtocol = http.baseUrl(System.getProperty("base"));
  ScenarioBuilder scn = scenario("steps").exec(http("step").get("/step"));

  {
    setUp(
        scn.injectOpen(
            nothingFor(Duration.ofSeconds(1)),
            constantUsersPerSec(low).during(Duration.ofSeconds(7)),
            rampUsersPerSec(low).to(8).during(2),
            constantUsersPerSec(8).during(7)))
        .protocols(httpProtocol);
  }
}
