import SimTesting
import Testing

/// A policy written in a test through the public `SyncPolicy` protocol, fuzzed with the same
/// engine: a sound design passes, a deliberately broken one is caught.
@Suite struct CustomPolicyTests {
  @Test func myPolicySurvivesRandomWorkloads() {
    expectFuzzPasses(policy: PreferLongerTitle(), seeds: 1...20)
  }

  @Test func ofTwoConcurrentTitlesTheLongerIsKept() throws {
    let file = try inlineScenario(
      """
      devices iPad phone
      policy field-lww-hlc
      type Note
        title: string = "" mutable
      at 0s iPad create Note n1 title="Draft"
      at 2s offline iPad phone
      at 3s iPad set n1 title="Sermon on the Mount"
      at 4s phone set n1 title="Sermon"
      at 10s online iPad phone
      expect n1.title == "Sermon on the Mount"
      expect concurrent-overwrite == 1
      """)
    let report = ScenarioRunner.run(file, policy: PreferLongerTitle()).report
    expectScenarioHolds(report)
    #expect(report.passed, "\(report.text)")
    #expect(report.policy == "prefer-longer-title")
    #expect(report.customPolicyType == "PreferLongerTitle")
    // The preset it wraps keeps the later one instead.
    #expect(!ScenarioRunner.run(file).report.passed)
  }

  @Test func aBrokenUserPolicyIsCaught() throws {
    let log = IssueLog()
    var result: FuzzSummary?
    withKnownIssue("KeepFirstTitle is broken on purpose: fuzzing must catch it") {
      result = expectFuzzPasses(policy: KeepFirstTitle(), seeds: 1...20)
    } matching: {
      log.matcher($0)
    }
    let summary = try #require(result)
    let seed = try #require(summary.failingSeeds.first)
    let shrunk = try #require(summary.shrunk)
    #expect(log.messages.count == 1)
    let message = log.messages.first ?? ""
    #expect(message.hasPrefix("fuzzing keep-first-title on the default workload: seed \(seed) lost data:"))
    // (Keeping the first title loses later titles: a stale overwrite, or a lost edit when a
    // concurrent write was involved.)
    #expect(message.contains("stale-overwrite") || message.contains("lost-edit"))
    // sim-cli cannot load a policy written in Swift, so the replay is in Swift.
    #expect(message.contains("keep-first-title is your own policy, which sim-cli cannot load"))
    #expect(message.contains("expectNoViolations(scenario: \"\(shrunk.file.source)\", policy: KeepFirstTitle())"))
    #expect(message.contains("SIM_FUZZ_SEED=\(seed) swift test --filter aBrokenUserPolicyIsCaught"))
    #expect(!message.contains("sim-cli run"))
    #expect(message.contains("look at its merge decisions (serverSave"))
    let replay = ScenarioRunner.run(try inlineScenario(shrunk.text, source: shrunk.file.source), policy: KeepFirstTitle()).report
    #expect(replay.count(shrunk.kind) > 0)
    // A single run of it says the same: replay in Swift, with the seed.
    let runMessage = SimTestFailure.check(replay)?.message ?? ""
    #expect(runMessage.contains("expectNoViolations(scenario: \"\(shrunk.file.source)\", seed: \(seed), policy: KeepFirstTitle())"))
  }
}
