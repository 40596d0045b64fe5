import Foundation
@_spi(Kernel) import Simulator
import Testing

@testable import Replica
@testable import Scenarios

/// Issue 28, item 5: timelines whose cost grew out of proportion to their length. Each shape is
/// run at 20,000 statements in the nightly run (`SIM_NIGHTLY=1`), at 5,000 in `swift test`: a
/// fraction of a second in a debug build now; before, tens of seconds to minutes at 20,000 (the
/// oracle compared every pair of a record's intents, the parser searched every declared account
/// per line, a device searched every account it had signed out of) — at 5,000, seconds, which
/// the test budget would show. The oracle's shortcuts are checked against the pairwise
/// questions they replace.
@Suite struct LongTimelineTests {
  static let note = "type Note\n  title: string = \"\" mutable\n"
  /// Statements of each long shape: 20,000 in the nightly run, 5,000 in `swift test`.
  static let n = ProcessInfo.processInfo.environment["SIM_NIGHTLY"] == "1" ? 20_000 : 5_000

  @Test func manySetsOfOneRecord() throws {
    let n = Self.n
    var text = "scenario sets\ndevices a\n" + Self.note + "at 0s a create Note n1\n"
    for i in 1...n { text += "at \(i)ms a set n1 title=\"t\(i)\"\n" }
    let result = ScenarioRunner.run(try parsed(text + "settle\n"))
    #expect(result.report.anomalies.isEmpty)
    #expect(result.report.converged)
    #expect(result.world.log.intents.count == n + 1)
    #expect(result.world.serverRecord(0)?.fields[0].value == .string("t\(n)"))
  }

  @Test func manyCreateDeleteCyclesOfOneName() throws {
    let n = Self.n
    var text = "scenario cycles\ndevices a\n" + Self.note
    for i in 0..<(n / 2) { text += "at \(2 * i)ms a create Note n1\nat \(2 * i + 1)ms a delete n1\n" }
    let result = ScenarioRunner.run(try parsed(text + "settle\n"))
    #expect(result.report.anomalies.isEmpty)
    #expect(result.report.converged)
    #expect(result.world.log.intents.count == n)
  }

  @Test func manyAccountsSignedIntoInTurn() throws {
    let n = Self.n
    var text = "scenario accounts\ndevices a\n"
    for i in 0..<n { text += "account u\(i)\n" }
    text += Self.note + "at 0s a create Note n1\n"
    for i in 1...n { text += "at \(i)ms a " + (i % 2 == 1 ? "sign-out\n" : "sign-in u\(i - 1)\n") }
    let file = try parsed(text + "settle\n")
    #expect(file.accounts.count == n)
    let result = ScenarioRunner.run(file)
    #expect(result.world.deviceAccount(0) == Int32(n - 1))
    // Every account but the one it ends in holds what was set aside there, in the order set aside.
    #expect(Array(result.world.devices[0].stashes.map(\.account).prefix(3)) == [0, 1, 3])
  }

  @Test func anUnknownAccountAmongManyIsNamedWithANearOne() {
    let text = "devices a\n" + (0..<2_000).map { "account u\($0)\n" }.joined() + "at 1s a sign-in u2000\nat 2s a sign-in\n"
    #expect(
      messages(text) == [
        "unknown account 'u2000'; did you mean 'u200'?", "expected the account to sign into; write 'DEVICE sign-in ACCOUNT', as in 'a sign-in u0'",
      ])
  }

  @Test func setAsideDataIsTakenBackByAccountInOrder() {
    var stashes = DeviceState.Stashes()
    func stash(_ tag: Int64) -> DeviceState.Stash {
      DeviceState.Stash(store: RecordTable(), ancestors: RecordTable(), outbox: Outbox(), savedToken: tag, zoneEpoch: 0)
    }
    for a in Int32(0)..<40 { stashes.setAside(stash(Int64(a)), account: a) }
    for a in Int32(0)..<40 where a % 3 != 0 { #expect(stashes.takeBack(account: a)?.savedToken == Int64(a)) }
    #expect(stashes.takeBack(account: 1) == nil)
    stashes.setAside(stash(100), account: 3)
    #expect(stashes.map(\.account) == [0, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 3])
    #expect(stashes.map(\.stash.savedToken).last == 100)
  }

  // MARK: Explanations

  /// A kept event is as large as its largest case: a server decision, boxed, no longer sets the
  /// size of every event (240 bytes each before).
  @Test func keptEventsAreSmall() {
    #expect(MemoryLayout<WorldEvent>.stride <= 64)
  }

  /// An explanation of a run without anomalies keeps no trace (it reads none): it costs what
  /// the run does, and says what it said with the trace.
  @Test func explainingARunWithoutAnomaliesKeepsNoTrace() throws {
    var text = "scenario many\ndevices " + (0..<20).map { "d\($0)" }.joined(separator: " ") + "\n" + Self.note
    for i in 0..<200 { text += "at \(i)ms d\(i % 20) create Note n\(i) title=\"t\(i)\"\n" }
    let file = try parsed(text + "settle\n")
    let (explanation, result) = Explanation.run(file)
    #expect(result.report.anomalies.isEmpty)
    #expect(result.world.events.isEmpty)
    #expect(explanation == Explanation.render(ScenarioRunner.run(file, keepEvents: true)))
    #expect(!explanation.contains("no trace kept"))
  }

  @Test func explainingARunWithAnomaliesKeepsItsTrace() throws {
    let file = try Scenario.load("fat-note-lww")
    let (explanation, result) = Explanation.run(file)
    #expect(!result.report.anomalies.isEmpty)
    #expect(!result.world.events.isEmpty)
    #expect(explanation == Explanation.render(ScenarioRunner.run(file, keepEvents: true)))
  }

  // MARK: The oracle's causal shortcuts

  /// One record's intents with random causal contexts, as the world makes them: each holds its
  /// own ordinal and a random set of earlier ones, contiguous or with holes; creates and deletes
  /// among sets.
  static func intents(seed: UInt64, count: Int) -> [Intent] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    func next(_ n: Int) -> Int {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return Int(state % UInt64(n))
    }
    var out: [Intent] = []
    for k in 1...count {
      var context = CausalContext()
      let known = next(3) == 0 ? k - 1 : next(k)
      for o in 1..<max(k, 1) where o <= known || next(4) == 0 { context.insert(Int32(o)) }
      if next(6) == 0 { context = CausalContext() }
      context.insert(Int32(k))
      let kind: IntentKind =
        switch next(5) {
        case 0: .create(type: 0, values: [])
        case 1: .delete
        default: .set([FieldWrite(field: 0, value: .string("v\(k)"))])
        }
      out.append(
        Intent(
          id: IntentID(k * 2), device: Int32(next(3)), trueTime: .zero, deviceTime: .zero, record: 7, kind: kind, ordinal: Int32(k),
          context: context, ignored: nil))
    }
    return out
  }

  @Test(arguments: 1...40) func causalShortcutsAnswerAsThePairwiseQuestions(seed: UInt64) {
    let all = Self.intents(seed: seed, count: 3 + Int(seed % 37))
    let creates = all.filter { $0.kind.createdType != nil }
    let deletes = all.filter { $0.kind == .delete }
    for (a, b) in [(all, all), (all, deletes), (creates, creates), (deletes, all), (all, [])] {
      #expect(Oracle.happenedBeforeSome(a, of: b) == a.map { x in b.contains { x.happenedBefore($0) } })
    }
    for i in all {
      #expect(Oracle.firstAfter(i, in: creates)?.id == creates.first { i.happenedBefore($0) }?.id)
      #expect(Oracle.allHappenedBefore(all.filter { $0.kind != .delete }, i) == all.filter { $0.kind != .delete }.allSatisfy { $0.happenedBefore(i) })
      for final in [0, creates.count / 2, max(creates.count - 1, 0)] {
        let known = creates.indices.filter { creates[$0].id == i.id || creates[$0].happenedBefore(i) }
        #expect(Oracle.incarnation(of: i, creates: creates, final: final) == (known.contains(final) ? final : known.last ?? 0))
      }
    }
  }
}
