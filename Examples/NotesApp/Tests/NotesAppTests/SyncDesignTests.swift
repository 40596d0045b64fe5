import SimTesting
import Testing

@Test func sermonNotesSurviveTwoOfflineDevices() {
  expectScenarioHolds(scenario: "sermon-notes")
}

@Test(arguments: scenarioNames())
func everyScenarioHolds(_ name: String) {
  expectScenarioHolds(scenario: name)
}

@Test func theInheritedStackLosesTheTypoFix() {
  expectViolations(.lostEdit, count: 1, scenario: "sermon-notes", policy: "cloudkit-default")
}

@Test func randomWorkloadsOnOurSchemaLoseNothing() {
  expectFuzzPasses(policy: "append-only text=merge", seeds: 1...30, workload: "sermon-notes")
}

@Test func ourOwnPolicyLosesNothing() {
  expectFuzzPasses(policy: PreferLongerTitle(), seeds: 1...30, workload: "sermon-notes")
}
