"""Back from zero (issue #38 item 3), as a sequence on the dev stack's elastic pool: idle in working hours
-> still one machine (a pool at zero would publish no load to scale out on); 19:00 -> zero; a request at
night -> 503 with Retry-After to 08:00 + the warm-up; 08:00 -> a machine again, serving once warm.

The group is modelled as AWS runs it: a scaling policy's new desired capacity is held within
[minSize, maxSize] (EC2 Auto Scaling user guide, "Set scaling limits for your Auto Scaling group": a
policy never takes the group below its minimum), a scheduled action sets min and desired (max -1: left).
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from inference_infra.components.aws.elastic_group import scale_in_expression
from inference_infra.lambdas.pool_asleep.respond import Hours, response

BERLIN = ZoneInfo("Europe/Berlin")
GROUP = "aws:autoscaling/group:Group"
SCHEDULE = "aws:autoscaling/schedule:Schedule"
FUNCTION = "aws:lambda/function:Function"


class Group:
    def __init__(self, props: dict) -> None:
        self.min, self.max, self.desired = props["minSize"], props["maxSize"], props["desiredCapacity"]

    def scale(self, change: int) -> None:
        self.desired = min(max(self.desired + change, self.min), self.max)

    def scheduled(self, action: dict) -> None:
        self.min, self.desired = action["minSize"], action["desiredCapacity"]
        if action["maxSize"] != -1:
            self.max = action["maxSize"]


def _scale_in_alarm_fires(machines: int, in_flight_per_machine: float, target: float) -> bool:
    """The low-load alarm's expression evaluated as CloudWatch would (IF(a, b, c) = b when a != 0)."""
    expression, threshold = scale_in_expression(target)
    assert expression.startswith("IF(m2 > 1, m1 * m2 / (m2 - 1), IF(m1 > 0, ")
    if machines > 1:
        value = in_flight_per_machine * machines / (machines - 1)
    else:
        value = float(expression.split("IF(m1 > 0, ")[1].split(",")[0]) if in_flight_per_machine > 0 else 0
    return value < threshold


def test_dev_pool_comes_back_from_zero_as_a_sequence(plan_stack):
    capture = plan_stack("dev").capture
    group = Group(capture.one(GROUP).props)
    actions = {a.props["scheduledActionName"]: a.props for a in capture.of_type(SCHEDULE)}
    responder = next(
        f for f in capture.of_type(FUNCTION) if "POOL_NAME" in f.props["environment"]["variables"]
    )
    hours = Hours.from_env(responder.props["environment"]["variables"])
    target = 10.0  # any positive target: the last machine's idle value is 0 either way

    # Wednesday 14:00, working hours, nobody calls: the alarm fires, the policy asks for one fewer,
    # and the group keeps its minimum of one machine (min_size 0 asked; the working-hours minimum is 1).
    assert (group.min, group.desired) == (1, 1)
    assert _scale_in_alarm_fires(machines=1, in_flight_per_machine=0, target=target)
    group.scale(-1)
    assert group.desired == 1  # a request now is served by that machine, no cold start

    # 19:00: the end of working hours takes the pool to zero.
    group.scheduled(actions["working-hours-end"])
    assert (group.min, group.desired) == (0, 0)

    # 20:00: a request gets 503 and Retry-After: until 08:00 tomorrow plus the warm-up.
    night = datetime(2026, 12, 2, 20, 0, tzinfo=BERLIN)
    answer = response(night, hours)
    assert answer["statusCode"] == 503
    wait = int(answer["headers"]["Retry-After"])
    assert wait == 12 * 3600 + hours.warmup_seconds

    # 08:00: working hours start with a machine warming up; the rule switches back once it is warm.
    group.scheduled(actions["working-hours-start"])
    assert (group.min, group.desired) == (1, 1)
    morning = datetime(2026, 12, 3, 8, 0, tzinfo=BERLIN)
    assert int(response(morning, hours)["headers"]["Retry-After"]) == hours.warmup_seconds
