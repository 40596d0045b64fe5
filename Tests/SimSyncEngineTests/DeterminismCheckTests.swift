import Foundation
import Scenarios
import SimTesting
import Testing

@testable import SimSyncEngine

/// An app whose titles carry a suffix from the system's random generator: two runs of one seed
/// differ at its first intent.
final class NotesAppWithSystemRandomSuffix: NotesApp, @unchecked Sendable {
  override func perform(_ intent: AppIntent) -> Bool {
    super.perform(suffixed(intent) { " #\(UInt64.random(in: 0...UInt64.max))" })
  }
}

/// The same, with the device's seeded generator: the same seed gives the same suffixes.
final class NotesAppWithSeededSuffix: NotesApp, @unchecked Sendable {
  override func perform(_ intent: AppIntent) -> Bool {
    super.perform(suffixed(intent) { " #\(UInt64.random(in: 0...UInt64.max, using: &self.device.random))" })
  }
}

/// An app that stamps a fresh `UUID()` into a file of its own at every change: it shows the same,
/// but its disk differs between runs.
final class NotesAppWritingAUUID: NotesApp, @unchecked Sendable {
  override func perform(_ intent: AppIntent) -> Bool {
    device.disk["last-change"] = Data(UUID().uuidString.utf8)
    return super.perform(intent)
  }
}

/// An app that reads the device's clock when the user makes a change.
final class NotesAppReadingTheClock: NotesApp, @unchecked Sendable {
  nonisolated(unsafe) static var readings: [(device: String, at: Date)] = []
  override func perform(_ intent: AppIntent) -> Bool {
    Self.readings.append((device.name, device.now))
    return super.perform(intent)
  }
}

extension AppIntent {
  /// The intent with `suffix()` appended to every string it writes.
  func suffixed(_ suffix: () -> String) -> AppIntent {
    func map(_ values: [(field: String, value: SyncValue)]) -> [(field: String, value: SyncValue)] {
      values.map { v in
        if case .string(let s) = v.value { (v.field, .string(s + suffix())) } else { v }
      }
    }
    switch self {
    case .create(let type, let id, let values): return .create(recordType: type, recordID: id, values: map(values))
    case .set(let id, let values): return .set(recordID: id, values: map(values))
    case .delete, .deleteZone: return self
    case .append(let id, let field, let text): return .append(recordID: id, field: field, text: text + suffix())
    }
  }
}

func suffixed(_ intent: AppIntent, _ suffix: () -> String) -> AppIntent { intent.suffixed(suffix) }

@Suite(.serialized) struct DeterminismCheckTests {
  func scenario() throws -> ScenarioFile { try Scenario.load("app-edit-under-fetch") }

  @Test func theReferenceAppBehavesTheSameInTwoRuns() throws {
    let check = ScenarioRunner.checkDeterminism(try scenario(), app: NotesApp.self)
    #expect(check.deterministic, "\(check.text)")
    #expect(check.steps > 20)
    #expect(check.text.hasPrefix("✓ deterministic: two runs made the same \(check.steps) steps"))
    expectDeterministic(app: NotesApp.self, scenario: "app-edit-under-fetch")
  }

  @Test func anAppDrawingFromTheSystemGeneratorIsCaughtAtItsFirstIntent() throws {
    let check = ScenarioRunner.checkDeterminism(try scenario(), app: AppUnderTest(NotesAppWithSystemRandomSuffix.self))
    #expect(!check.deterministic)
    let d = try #require(check.firstDifference)
    #expect(d.step == 1)
    #expect(d.device == "iPad" && d.input == "intent i1" && d.time == "0.000s")
    #expect(!d.onlyTheDisk)
    #expect(d.first.contains("first title #") && d.first != d.second)
    #expect(check.text.contains("Date() instead of SimDevice.now"))
    withKnownIssue("the system generator differs between runs") {
      expectDeterministic(app: NotesAppWithSystemRandomSuffix.self, scenario: "app-edit-under-fetch")
    }
  }

  @Test func theDevicesGeneratorIsSeeded() throws {
    let a = ScenarioRunner.checkDeterminism(try scenario(), app: AppUnderTest(NotesAppWithSeededSuffix.self))
    #expect(a.deterministic, "\(a.text)")
    let other = ScenarioRunner.run(try scenario(), app: NotesAppWithSeededSuffix.self, seed: 2).report
    #expect(other.traceHash != a.traceHashes.0, "another seed draws other suffixes")
  }

  @Test func aDiskThatDiffersIsCaughtAndSaidSo() throws {
    let check = ScenarioRunner.checkDeterminism(try scenario(), app: AppUnderTest(NotesAppWritingAUUID.self))
    let d = try #require(check.firstDifference)
    #expect(d.step == 1 && d.onlyTheDisk)
    #expect(check.text.contains("wrote other bytes to its disk"))
  }

  @Test func theDeviceClockIsTheScenariosSkewedClock() throws {
    let file = try ScenarioParser.parse(
      """
      devices iPad phone
      clock phone skew +2s
      type Note
        title: string = "" mutable
      at 3s  phone create Note n1 title="a"
      at 4s  iPad  set n1 title="b"
      settle
      """, source: "clock.scenario"
    ).get()
    NotesAppReadingTheClock.readings = []
    _ = ScenarioRunner.run(file, app: NotesAppReadingTheClock.self)
    let readings = NotesAppReadingTheClock.readings.map { ($0.device, $0.at.timeIntervalSince1970 - SimDevice.epoch) }
    #expect(readings.count == 2)
    #expect(readings.first?.0 == "phone" && readings.first?.1 == 5)
    #expect(readings.last?.0 == "iPad" && readings.last?.1 == 4)
  }

  @Test func aBehaviourLogDiffersOnlyWhereTheRunsDo() {
    let step = { (input: String, outcome: String) in
      AppBehaviourLog.Step(time: .zero, device: "iPad", input: input, outcome: outcome, disk: "1 files #0")
    }
    let a = [step("intent i1", "shows n1{a}"), step("push reply", "shows n1{a}")]
    let same = ScenarioRunner.compare(a, "h", a, "h")
    #expect(same.deterministic)
    let shorter = ScenarioRunner.compare(a, "h", Array(a.prefix(1)), "h")
    #expect(shorter.firstDifference?.step == 2)
    #expect(shorter.firstDifference?.second == "no step: the run had ended")
    let hashOnly = ScenarioRunner.compare(a, "h", a, "g")
    #expect(!hashOnly.deterministic && hashOnly.firstDifference == nil)
  }
}
