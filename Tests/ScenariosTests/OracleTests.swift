import Replica
import Scenarios
@_spi(Kernel) import Simulator
import Testing

/// The oracle on small inline scenarios: each rule of `oracle.md`, in both directions.
@Suite struct OracleTests {
  func run(_ body: String, policy: String = "append-only") throws -> RunReport {
    let text = """
      devices iPad phone
      policy \(policy)
      latency 100ms
      type Note
        title: string = "" mutable
        body: text = ""
        pages: int = 0
      type Stroke append-only
        points: string = ""

      """ + body
    let file = try Scenario.parse(text, source: "inline").get()
    return ScenarioRunner.run(file).report
  }

  @Test func concurrentWritesToAMutableFieldAreInformational() throws {
    let r = try run(
      """
      at 0s iPad create Note n1
      at 2s offline iPad phone
      at 3s iPad set n1 title="a"
      at 4s phone set n1 title="b"
      at 10s online iPad phone
      """)
    #expect(r.violations.isEmpty)
    #expect(r.counts[.concurrentOverwrite] == 1)
  }

  @Test func concurrentWritesToANonMutableFieldAreALostEdit() throws {
    let r = try run(
      """
      at 0s iPad create Note n1
      at 2s offline iPad phone
      at 3s iPad set n1 pages=3
      at 4s phone set n1 pages=4
      at 10s online iPad phone
      """)
    #expect(r.counts[.lostEdit] == 1)
    #expect(r.anomalies.first?.field?.name == "pages")
  }

  @Test func aCausallyLaterWriteSupersedesAnEarlierOne() throws {
    let r = try run(
      """
      at 0s iPad create Note n1
      at 1s iPad set n1 pages=1
      at 5s phone set n1 pages=2
      at 9s iPad set n1 pages=3
      """)
    #expect(r.anomalies.isEmpty, "\(r.text)")
  }

  @Test func concurrentAppendsToOneTextFieldLoseOneUnderWholeTextLWW() throws {
    let r = try run(
      """
      at 0s iPad create Note n1 body="x"
      at 2s offline iPad phone
      at 3s iPad append n1.body "a"
      at 4s phone append n1.body "b"
      at 10s online iPad phone
      """, policy: "field-lww-hlc")
    #expect(r.counts[.lostEdit] == 1)
  }

  @Test func theSameAppendsMergeUnderTheCRDT() throws {
    let r = try run(
      """
      at 0s iPad create Note n1 body="x"
      at 2s offline iPad phone
      at 3s iPad append n1.body "a"
      at 4s phone append n1.body "b"
      at 10s online iPad phone
      expect no violations
      """, policy: "crdt")
    #expect(r.passed, "\(r.text)")
  }

  @Test func aReplacementMustStayApplied() throws {
    let r = try run(
      """
      at 0s iPad create Note n1 body="In teh beginning"
      at 2s offline iPad phone
      at 3s iPad replace n1.body "teh" "the"
      at 4s phone append n1.body "!"
      at 10s online iPad
      at 20s online phone
      """, policy: "field-lww-arrival")
    #expect(r.counts[.lostEdit] == 1)
    #expect(r.anomalies.contains { $0.explanation.contains("replace \"teh\"→\"the\"") })
  }

  @Test func aDeleteAfterEveryEditMustWinAndAnEventMustSurvive() throws {
    let r = try run(
      """
      at 0s iPad create Note n1
      at 0s iPad create Stroke s1 points="a"
      at 5s phone delete n1
      expect no violations
      expect n1 deleted
      expect s1 exists
      """)
    #expect(r.passed, "\(r.text)")
  }

  @Test func failedExpectationsAreReportedWithWhatWasFound() throws {
    let r = try run(
      """
      at 0s iPad create Note n1 title="a"
      expect n1.title == "b"
      expect lost-edit >= 1
      """)
    #expect(!r.passed)
    #expect(r.expectations.map(\.passed) == [false, false])
    #expect(r.expectations[0].actual?.contains("\"a\"") == true)
    #expect(r.text.contains("✗ 2 of 2 expectations failed"))
  }

  @Test func ignoredIntentsAreReportedNotJudged() throws {
    let r = try run(
      """
      at 0s iPad create Note n1 body="x"
      at 0.01s phone append n1.body "y"
      """)
    #expect(r.stats.ignoredIntents == 1)
    #expect(r.ignored.first?.contains("the record is not on this device") == true)
    #expect(r.violations.isEmpty)
  }

  @Test func everyCountKeyIsPresentInJSON() throws {
    let r = try run("at 0s iPad create Note n1")
    let json = r.json.serialized()
    for kind in AnomalyKind.allCases { #expect(json.contains("\"\(kind.rawValue)\":0")) }
    #expect(json.contains("\"traceHash\":\"\(r.traceHash)\""))
  }
}

/// A user-defined policy through the public protocol: the server answers every save with a
/// conflict, so syncing never finishes.
struct NeverSettles: SyncPolicy {
  var base = StandardPolicy(preset: "sync-engine-merge")!
  var name: String { "never-settles" }
  var settings: PolicySettings { base.settings }
  func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
    current == nil ? .store(write.record) : .conflict
  }
  func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState {
    base.deviceApply(remote: remote, local: local, pending: pending, context: context)
  }
}

@Suite struct SettleBoundTests {
  @Test func aRunThatCannotSettleIsReportedAsAStalledSyncNotAHang() throws {
    let file = try Scenario.parse(
      """
      devices iPad phone
      type Note
        title: string = "" mutable
      at 0s iPad create Note n1
      at 5s iPad set n1 title="x"
      """, source: "inline"
    ).get()
    let report = ScenarioRunner.run(file, policy: NeverSettles()).report
    #expect(!report.converged)
    #expect(report.policy == "never-settles")
    // The iPad never gets its edit through: a device still holding an unsent change after
    // settle is a stalled sync, and it says why (not also a divergence of the same device).
    let stalled = try #require(report.anomalies.first { $0.kind == .stalledSync })
    #expect(stalled.devices.map(\.name) == ["iPad"])
    #expect(stalled.explanation.contains("iPad still holds 1 unsent change (n1): the run did not settle — sync did not reach quiescence"))
    #expect(!report.anomalies.contains { $0.kind == .divergence && $0.record == nil })
  }
}

@Suite struct SchemaLimitTests {
  @Test func aTypeMayHaveAtMost64Fields() {
    let fields = (1...65).map { "  f\($0): int = 0" }.joined(separator: "\n")
    let text = "devices a\ntype Big\n\(fields)\n"
    guard case .failure(let errors) = Scenario.parse(text, source: "big.scenario") else {
      Issue.record("65 fields should not parse")
      return
    }
    #expect(errors.diagnostics.first?.message == "Big already has 64 fields, the most a record type may have")
    #expect(errors.diagnostics.first?.location.line == 67)
  }
}

@Suite struct DiagnosticPrintingTests {
  @Test func controlCharactersInTheEchoedLineArePrintedAsReplacementCharacters() {
    guard case .failure(let errors) = Scenario.parse("devices a\u{1B}[31m b\nat 1s a sync\n", source: "esc.scenario") else {
      Issue.record("an escape in a device name should not parse")
      return
    }
    let text = errors.rendered()
    #expect(!text.contains("\u{1B}"))
    #expect(text.contains("devices a\u{FFFD}[31m b"))
  }
}
