import Foundation
import SimTesting
import Testing

/// `expectNoViolations`: silent on the safe design, one teaching issue on a lossy one, and an
/// issue (not a crash) for a scenario or policy that cannot be used.
@Suite struct ExpectNoViolationsTests {
  @Test func theEssaysDesignLosesNothing() {
    expectNoViolations(scenario: "two-device-acceptance")
  }

  @Test func aLossyRunRecordsOneIssueThatTeaches() throws {
    let report = ScenarioRunner.run(try Scenario.load("fat-note-lww")).report
    let log = IssueLog()
    withKnownIssue("fat-note-lww loses an edit on purpose: the helper must record one teaching issue") {
      expectNoViolations(report)
    } matching: {
      log.matcher($0)
    }

    #expect(log.messages.count == 1)
    let message = try #require(log.messages.first)
    #expect(message == SimTestFailure.check(report)?.message)
    // Headline, the diff, each anomaly explained, the reproduction, what to do.
    #expect(message.hasPrefix("fat-note-lww under cloudkit-default (seed 1) lost data: 1 lost-edit\n"))
    #expect(message.contains("  − expected: no violations\n  + actual:   1 violation (1 lost-edit)"))
    let lost = try #require(report.violations.first)
    #expect(message.contains("lost-edit (1)\n  • n1.body: \(lost.explanation)"))
    #expect(message.contains("reproduce:\n  \(report.reproduction)\n"))
    #expect(report.reproduction == "sim-cli run fat-note-lww --seed 1 --policy cloudkit-default")
    #expect(message.contains("lost-edit — this policy has granularity=record, save=all-keys and text=whole:"))
  }

  @Test func aScenarioRunsUnderAnotherPolicyOrSeedWhenAsked() {
    let log = IssueLog()
    withKnownIssue("different-fields under cloudkit-default loses an edit on purpose; hard-delete on two-device-acceptance must not") {
      expectNoViolations(scenario: "two-device-acceptance", seed: 7, policy: "hard-delete")
      expectNoViolations(scenario: "different-fields", seed: 3)
    } matching: {
      log.matcher($0)
    }
    #expect(log.messages.count == 1)
    #expect(log.messages.first?.hasPrefix("different-fields under cloudkit-default (seed 3) lost data: 1 lost-edit\n") == true)
    #expect(log.messages.first?.contains("sim-cli run different-fields --seed 3 --policy cloudkit-default") == true)
    // The fixed variant of the same scenario.
    expectNoViolations(scenario: "different-fields", policy: "field-lww-hlc")
  }

  @Test func aMisspelledScenarioIsAnIssueWithASuggestion() {
    let log = IssueLog()
    withKnownIssue("a misspelled scenario name on purpose: the issue must suggest the right one") {
      let report = expectNoViolations(scenario: "two-device-acceptence")
      #expect(report == nil)
    } matching: {
      log.matcher($0)
    }
    #expect(log.messages.count == 1)
    let message = log.messages.first ?? ""
    #expect(message.hasPrefix("could not load scenario \"two-device-acceptence\": no scenario named 'two-device-acceptence' (looked in "))
    #expect(message.contains("then the built-in scenarios); did you mean 'two-device-acceptance'?\n"), "\(message)")
  }

  @Test func aScenarioThatDoesNotParseIsAnIssueWithItsDiagnostics() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "simtesting-\(ProcessInfo.processInfo.processIdentifier)-broken.scenario"
    ).path
    try "devices iPad\nat 1s iPad frobnicate n1\n".write(toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let log = IssueLog()
    withKnownIssue("a scenario that does not parse on purpose: the issue must carry its diagnostics") {
      expectNoViolations(scenario: path)
    } matching: {
      log.matcher($0)
    }
    #expect(log.messages.count == 1)
    let message = log.messages.first ?? ""
    #expect(message.hasPrefix("scenario \"\(path)\" does not parse:"))
    #expect(message.contains("frobnicate"))
    #expect(message.contains(":2:"))
  }

  @Test func aMisspelledPolicyIsAnIssuePointingAtTheWord() {
    let log = IssueLog()
    withKnownIssue("a misspelled policy value on purpose: the issue must point at the word") {
      expectNoViolations(scenario: "two-device-acceptance", policy: "field-lww-hlc delete=hrad")
    } matching: {
      log.matcher($0)
    }
    #expect(log.messages.count == 1)
    let message = log.messages.first ?? ""
    #expect(message.hasPrefix("invalid policy \"field-lww-hlc delete=hrad\": invalid value 'hrad' for policy key 'delete'"))
    #expect(message.contains("did you mean 'hard'?"))
    #expect(message.contains("  field-lww-hlc delete=hrad\n                       ^\n"))
  }
}
