@_spi(Kernel) import Simulator
import Testing

@testable import Replica

/// `CausalLedger` against the plainest model of what a device has received: per device and
/// record a `Set` of ordinals, which gains an intent's own ordinal when the device makes it and
/// the whole context of every intent a copy carries when the device takes the copy in. Random
/// makes and takes over a few devices and records reach every way the ledger keeps an entry
/// (one intent's context, two, and a union of its own once a third comes).
struct CausalLedgerTests {
  static func ordinals(_ c: CausalContext, below bound: Int32) -> Set<Int32> {
    bound < 1 ? [] : Set((1...bound).filter { c.contains($0) })
  }

  @Test(arguments: [1, 2, 3] as [UInt64])
  func theLedgerHoldsExactlyWhatWasReceived(seed: UInt64) {
    let devices = 5
    let records = 3
    var rng = SimRandom(seed: seed, stream: "causal-ledger-test")
    var log = IntentLog()
    var ledgers = Array(repeating: CausalLedger(), count: devices)
    var model = Array(repeating: Array(repeating: Set<Int32>(), count: records), count: devices)
    var contexts: [Set<Int32>] = []  // by intent id - 1
    var onRecord = Array(repeating: [IntentID](), count: records)
    for step in 0..<3_000 {
      let d = Int(rng.below(UInt64(devices)))
      let r = Int(rng.below(UInt64(records)))
      if onRecord[r].isEmpty || rng.below(4) == 0 {
        var intent = Intent(
          id: log.nextID, device: Int32(d), trueTime: .zero, deviceTime: .zero, record: RecordKey(r),
          kind: .set([FieldWrite(field: 0, value: .int(Int64(step)))]), ordinal: 0, context: CausalContext(), ignored: nil)
        let ordinal = log.nextOrdinal(on: RecordKey(r))
        ledgers[d].made(&intent, ordinal: ordinal, tracking: true, log: log)
        log.append(intent)
        model[d][r].insert(ordinal)
        contexts.append(model[d][r])
        onRecord[r].append(intent.id)
        #expect(Self.ordinals(intent.context, below: ordinal + 1) == model[d][r], "step \(step): the context of intent \(intent.id)")
      } else {
        // A copy written by one earlier intent on the record, created by its first.
        let writer = onRecord[r][Int(rng.below(UInt64(onRecord[r].count)))]
        let copy = RecordState(
          key: RecordKey(r), type: 0, creator: onRecord[r][0], creatorDevice: 0,
          fields: [FieldValue(value: .int(1), writer: writer, stamp: .origin)], stamp: .origin)
        ledgers[d].took(copy, log: log)
        model[d][r].formUnion(contexts[Int(onRecord[r][0]) - 1])
        model[d][r].formUnion(contexts[Int(writer) - 1])
      }
      let bound = Int32(onRecord[r].count)
      #expect(
        Self.ordinals(ledgers[d].context(of: RecordKey(r), log: log), below: bound) == model[d][r],
        "step \(step): device \(d), record \(r)")
    }
    for d in 0..<devices {
      for r in 0..<records {
        let c = ledgers[d].context(of: RecordKey(r), log: log)
        #expect(Self.ordinals(c, below: Int32(onRecord[r].count)) == model[d][r], "at the end: device \(d), record \(r)")
      }
    }
  }

  /// A record a device stops showing at an account change went with the account: shown again,
  /// it brings no delete with it, whatever the device had taken in; one that vanished otherwise
  /// (with a delete) and shows again brings the deletes applied.
  @Test func aRecordHiddenWithTheAccountComesBackWithNoDelete() {
    var ledger = CausalLedger()
    ledger._noteDelete(5, on: 3)
    #expect(ledger.shown(3, visible: true) == nil, "a first showing is no reappearance")
    #expect(ledger.shown(3, visible: false, withTheAccount: true) == nil)
    #expect(ledger.shown(3, visible: true) == [], "hidden at a sign-out, shown at the sign-in")
    #expect(ledger.shown(3, visible: false) == nil)
    #expect(ledger.shown(3, visible: true) == [5], "vanished otherwise: the delete comes with it")
    #expect(ledger.shown(3, visible: false, withTheAccount: true) == nil)
    #expect(ledger.shown(3, visible: true) == [], "the last vanishing decides")
  }
}
