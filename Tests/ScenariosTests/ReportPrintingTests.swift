import Testing

@testable import Scenarios

/// What a developer sees when printing parts of a report in a test or a playground.
@Suite struct ReportPrintingTests {
  @Test func countsPrintKindNamesInReportOrder() throws {
    let report = ScenarioRunner.run(try Scenario.load("fat-note-lww")).report
    #expect(
      "\(report.counts)"
        == "[lost-edit: 1, stale-overwrite: 0, resurrection: 0, dropped-event: 0, duplicate-event: 0, stranded-record: 0, divergence: 0, phantom-value: 0, stalled-sync: 0, dangling-reference: 0, logical-duplicate: 0, concurrent-overwrite: 0, delete-update-conflict: 0, access-leak: 0, missing-asset: 0]"
    )
    #expect(report.counts[.lostEdit] == 1)
    #expect(report.counts.total == report.anomalies.count)
    #expect(report.counts.filter { $0.count > 0 }.map(\.kind) == [.lostEdit])
    #expect("\(AnomalyKind.lostEdit)" == "lost-edit")
  }

  @Test func theImpliedExpectationSaysImpliedOnce() throws {
    let text = try #require(Scenario.builtInText("fat-note-lww")).split(separator: "\n").filter { !$0.hasPrefix("expect") }
      .joined(separator: "\n")
    let report = ScenarioRunner.run(try Scenario.parse(text, source: "fat-note-lww.scenario").get()).report
    #expect(report.text.contains("  ✗ implied: expect no violations — found 1 violation: 1 lost-edit\n"), "\(report.text)")
    #expect(!report.text.contains("(implied)"))
  }
}
