import Foundation
import Testing

@testable import SimTesting

/// `expectScenarioHolds` checks what the file says; `expectViolations` pins down a known loss.
@Suite struct ExpectScenarioHoldsTests {
  /// A package-like folder in the temporary directory: `scenarios/NAME.scenario` files and the
  /// path of a test file two folders below, as `#filePath` would be in `Tests/MyTests/`.
  struct Package {
    let root: URL
    var testFile: String { root.appendingPathComponent("Tests/MyTests/NotesTests.swift").path }

    init(_ files: [String: String], tag: String = #function) throws {
      root = FileManager.default.temporaryDirectory.appendingPathComponent("simtesting-\(getpid())-\(tag.filter(\.isLetter))")
      let scenarios = root.appendingPathComponent("scenarios")
      try FileManager.default.createDirectory(at: scenarios, withIntermediateDirectories: true)
      try FileManager.default.createDirectory(at: root.appendingPathComponent("Tests/MyTests"), withIntermediateDirectories: true)
      for (name, text) in files {
        try text.write(to: scenarios.appendingPathComponent(name + ".scenario"), atomically: true, encoding: .utf8)
      }
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
  }

  static let wrongTitle = """
    devices iPad phone
    policy field-lww-hlc
    type Note
      title: string = "" mutable
    at 0s iPad create Note n1 title="Draft"
    at 1s iPad create Note n2 title="Other"
    at 5s phone delete n2
    expect n1.title == "wrong"
    expect n2 exists
    expect converged
    """

  @Test func aFailingExpectLineFailsTheTestAndIsNamed() throws {
    let package = try Package(["wrong-title": Self.wrongTitle])
    defer { package.remove() }
    let log = IssueLog()
    withKnownIssue("the file's expect lines are wrong on purpose: the helper must say which") {
      expectScenarioHolds(scenario: "wrong-title", filePath: package.testFile)
    } matching: {
      log.matcher($0)
    }
    #expect(log.messages.count == 1)
    let message = log.messages.first ?? ""
    #expect(
      message.hasPrefix(
        "wrong-title under field-lww-hlc (seed 1): 2 of 3 expectations failed: `expect n1.title == \"wrong\"`, `expect n2 exists`\n"),
      "\(message)")
    #expect(message.contains("  ✗ line 8: expect n1.title == \"wrong\" — found iPad: \"Draft\"; phone: \"Draft\"; the server: \"Draft\"\n"))
    #expect(message.contains("  ✗ line 9: expect n2 exists — found n2 is missing on iPad, phone, the server\n"))
    #expect(message.contains("  ✓ line 10: expect converged\n"))
    #expect(message.contains("sim-cli run wrong-title --seed 1 --policy field-lww-hlc"))
    // The run itself lost nothing, so the other helper passes: it does not read expect lines.
    expectNoViolations(scenario: "wrong-title", filePath: package.testFile)
  }

  @Test func aFileWithoutExpectLinesMustHaveNoViolations() throws {
    let text = try #require(Scenario.builtInText("fat-note-lww")).split(separator: "\n").filter { !$0.hasPrefix("expect") }
      .joined(separator: "\n")
    let package = try Package(["fat-note-silent": text])
    defer { package.remove() }
    let log = IssueLog()
    withKnownIssue("fat-note-lww loses an edit; without expect lines that is a failure") {
      expectScenarioHolds(scenario: "fat-note-silent", filePath: package.testFile)
    } matching: {
      log.matcher($0)
    }
    let message = log.messages.first ?? ""
    #expect(message.hasPrefix("fat-note-lww under cloudkit-default (seed 1): `expect no violations` failed\n"), "\(message)")
    #expect(message.contains("  ✗ implied: expect no violations — found 1 violation: 1 lost-edit\n"))
    #expect(message.contains("lost-edit (1)\n  • n1.body: "))
  }

  @Test func anInlineScenarioIsReproducedByItsText() throws {
    let report = ScenarioRunner.run(try inlineScenario(Self.wrongTitle)).report
    #expect(report.fileToSave == "inline.scenario")
    #expect(report.reproduction == "sim-cli run inline.scenario --seed 1 --policy field-lww-hlc")
    #expect(report.text.contains("reproduce: save the scenario as inline.scenario (the text it was parsed from), then: sim-cli run inline.scenario"))
    let message = try #require(SimTestFailure.checkExpectations(report)?.message)
    #expect(message.contains("  the scenario is text in the test, not a file; save it as inline.scenario, without the 4-space indent:\n\n"))
    for line in Self.wrongTitle.split(separator: "\n") { #expect(message.contains("\n    \(line)\n")) }
    #expect(message.contains("  then:\n  sim-cli run inline.scenario --seed 1 --policy field-lww-hlc\n"))
    // A file or a built-in scenario needs no saving.
    #expect(ScenarioRunner.run(try Scenario.load("fat-note-lww")).report.fileToSave == nil)
  }

  @Test func theBuiltInScenariosHoldWhatTheySay() {
    // fat-note-lww expects its lost edit: the file holds, although the run has a violation.
    let report = expectScenarioHolds(scenario: "fat-note-lww")
    #expect(report?.violations.count == 1)
  }

  @Test(arguments: scenarioNames())
  func everyNamedScenarioHolds(_ name: String) {
    expectScenarioHolds(scenario: name)
  }

  @Test func theNamesListedAreTheScenariosFolderOnesAndOptionallyTheBuiltIns() throws {
    #expect(scenarioNames() == Scenario.builtInNames.sorted())
    let package = try Package(["wrong-title": Self.wrongTitle, "fat-note-lww": Self.wrongTitle])
    defer { package.remove() }
    #expect(scenarioNames(filePath: package.testFile) == ["fat-note-lww", "wrong-title"])
    let all = scenarioNames(includingBuiltIn: true, filePath: package.testFile)
    #expect(all == Array(Set(Scenario.builtInNames + ["wrong-title"])).sorted())
  }

  @Test func aKnownLossIsPinnedDownExactly() {
    expectViolations(.lostEdit, count: 1, scenario: "fat-note-lww")
    let log = IssueLog()
    withKnownIssue("the counts are wrong on purpose: a fix or a new loss must fail the test") {
      expectViolations(.lostEdit, count: 2, scenario: "fat-note-lww")
      expectViolations(.lostEdit, count: 1, scenario: "fat-note-lww", policy: "crdt")
      expectViolations([:], scenario: "fat-note-lww")
    } matching: {
      log.matcher($0)
    }
    #expect(log.messages.count == 3)
    #expect(log.messages.first?.hasPrefix("fat-note-lww under cloudkit-default (seed 1) did not lose what the test expects\n") == true)
    #expect(log.messages.first?.contains("  − expected: 2 lost-edit and no other violation\n") == true)
    #expect(log.messages.first?.contains("  differs in: lost-edit (2 expected, 1 found)\n") == true)
    #expect(log.messages.dropFirst().first?.contains("  + actual:   no violations") == true)
    #expect(log.messages.last?.contains("  − expected: no violations\n") == true)
  }

  @Test func aSeedFromTheEnvironmentReplacesTheTestsRange() throws {
    let one = _Checks.fuzz(
      .spec("mark-first-unit"), seeds: 1...20, shape: FuzzHelperTests.small, jobs: 1, stopAtFirstFailure: true, testName: "t",
      environment: ["SIM_FUZZ_SEED": "7"])
    let summary = try #require(one.0)
    #expect(summary.seeds == 7...7)
    #expect(summary.seedsRun == 1)
    #expect(summary.replayedFrom == "SIM_FUZZ_SEED=7")
    if let failure = one.1 {
      #expect(failure.message.contains("(the seeds came from SIM_FUZZ_SEED=7 in the environment, not from the test)"))
      #expect(failure.message.contains("SIM_FUZZ_SEED=7 swift test --filter t"))
    }
    let range = _Checks.fuzz(
      .spec("append-only"), seeds: 1...20, shape: FuzzHelperTests.small, jobs: 1, stopAtFirstFailure: true, testName: nil,
      environment: ["SIM_FUZZ_SEEDS": "3...5"])
    #expect(range.0?.seedsRun == 3)
    #expect(range.1 == nil)
    for bad in [["SIM_FUZZ_SEED": "x7"], ["SIM_FUZZ_SEEDS": "5...3"], ["SIM_FUZZ_SEED": "1", "SIM_FUZZ_SEEDS": "1...2"]] {
      let result = _Checks.fuzz(
        .spec("append-only"), seeds: 1...2, shape: FuzzHelperTests.small, jobs: 1, stopAtFirstFailure: true, testName: nil, environment: bad)
      #expect(result.0 == nil)
      guard case .invalidEnvironment = result.1 else {
        Issue.record("\(bad) was accepted")
        continue
      }
      #expect(result.1?.message.contains("in the environment cannot be used") == true)
    }
  }

  @Test func adviceNeverRecommendsThePolicyInUse() {
    // field-lww-hlc already merges per field; only text=merge is left to suggest.
    let advice = ViolationAdvice.render([.lostEdit], settings: PolicyPreset.named("field-lww-hlc")!.settings, isCustom: false)
    #expect(advice.contains("fix: text=merge — "), "\(advice)")
    #expect(!advice.contains("granularity=field save=changed-keys text=merge"))
    #expect(!advice.contains("as a spec: field-lww-hlc\n"))
    // Every preset, every kind: a suggested spec is never the spec in use.
    for preset in PolicyPreset.all {
      let text = ViolationAdvice.render(AnomalyKind.allCases.filter(\.isViolation), settings: preset.settings, isCustom: false)
      for line in text.split(separator: "\n") where line.contains("as a spec: ") {
        let spec = String(line[line.range(of: "as a spec: ")!.upperBound...]).replacingOccurrences(of: "'", with: "")
        #expect(spec != preset.name)
        #expect((try? PolicySpec.parse(spec).get())?.settings != preset.settings, "\(preset.name): \(line)")
      }
    }
  }
}
