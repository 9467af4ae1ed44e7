"""HT105: network calls (fixture ht105-network)."""
import pytest

from helpers import (fixture_suite, Expect, Silent, listed_at)

FIX = "ht105-network"
C = "src/weather/client.py"
T = "tests/test_client.py::"

EXPECTED = [
    # a mounted requests-mock adapter answers the session's requests, a real adapter does not
    # (near miss); requests' own transport patched (HTTPAdapter.send) answers every request
    # (a new user's trial on requests-cache)
    Expect("a-real-adapter-mounted", "HT105", C, 'return session.get(API_URL + "/radar"',
           tests=[T + "test_radar_through_a_mounted_real_adapter"]),
    Expect("requests-get-constant", "HT105", C, "resp = requests.get(API_URL, params",
           tests=[T + "test_current_live"], origin="module-constant"),
    # a client built without a target: the finding is at the call that names the URL
    Expect("session-get", "HT105", C, "resp = session.get(", tests=[T + "test_forecast_live"]),
    # a loopback default written in the code under test is uncontrolled ([controls] loopback = false)
    Expect("loopback-default-in-code", "HT105", C, 'return requests.get(base + "/health"',
           tests=[T + "test_health_of_local_default"]),
    # the target is fixed at the constructor: the finding is there; a responses mock does not cover httpx (S4)
    Expect("httpx-client-constructor", "HT105", C, "with httpx.Client(base_url=API_URL",
           tests=[T + "test_status_with_requests_only_mock"]),
    # setUpClass enters a patch of socket.gethostbyname for its class (enterClassContext): only
    # the unpatched class's test is listed
    Expect("patched-for-the-class-near-miss", "HT105", C, "return socket.gethostbyname(host)",
           tests=[T + "TestStationUnpatched::test_station_address_live"]),
    # a project subclass of requests.Session sends through the library's methods: directly, and
    # through super() from a mixin in front (requests-cache's CachedSession; a new user's trial);
    # requests-mock answers it (test_cached_forecast_with_requests_mock is not listed)
    Expect("session-subclass-through-super", "HT105", "src/weather/sessions.py",
           "return super().request(method, url, **kwargs)", tests=["tests/test_sessions.py::test_cached_forecast_live"]),
    Expect("session-subclass-get", "HT105", "src/weather/sessions.py",
           'return TracedSession().get(f"{API_URL}/forecast/{city}", timeout=5)',
           tests=["tests/test_sessions.py::test_traced_forecast_live"]),
]


SILENT = [
    Silent("transport-patched", C, 'return requests.get(API_URL + "/pollen"',
           "patch.object(requests.adapters.HTTPAdapter, 'send') answers every request of requests"),
    Silent("session-subclass-own-get", "src/weather/sessions.py", 'return CannedSession().get(f"{API_URL}',
           "the subclass's own get sends nothing"),
    Silent("session-constructor", C, "session = requests.Session()", "no target at the constructor"),
    Silent("only-under-mocks", C, 'requests.get(API_URL + "/alerts"', "reached only under responses.activate (S4)"),
    Silent("response-use", C, "resp.raise_for_status()", "not a second network call"),
    Silent("use-of-httpx-client", C, 'return http.get("/status")', "a use of the client built with base_url"),
    Silent("responses-register", "tests/test_client.py", "responses.add(responses.GET, client.API_URL, json",
           "registers a canned response"),
    Silent("requests-mock-register", "tests/test_client.py", 'requests_mock.get(client.API_URL, json',
           "registers a canned response"),
    Silent("test-call-site", "tests/test_client.py", 'assert client.current("Oslo") is not None',
           "anchored at the sink"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)

MOCKED = [
    ("resp = requests.get(API_URL, params", "test_current_with_responses"),
    ("resp = requests.get(API_URL, params", "test_current_with_requests_mock"),
    ("resp = session.get(", "test_forecast_with_requests_mock"),
    ("with httpx.Client(base_url=API_URL", "test_status_with_httpx_mock"),
    ('return requests.get(base + "/health"', "test_health_of_loopback_server_chosen_here"),
]


@pytest.mark.parametrize("snippet, test", MOCKED, ids=[m[1] for m in MOCKED])
def test_controlled_test_not_listed(findings, snippet, test):
    assert T + test not in listed_at(FIX, findings, "HT105", C, snippet)


