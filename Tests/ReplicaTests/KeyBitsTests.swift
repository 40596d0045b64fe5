@_spi(Kernel) import Simulator
import Testing

@testable import Replica

/// `KeyBits` and `KeyMap` replace a `Set<RecordKey>` and a `[RecordKey: Value]` on the hot path:
/// they must answer every question those did, after any sequence of changes. Checked against the
/// standard collections over random operations on keys across several 64-bit words (odd seeds:
/// ten keys, so that the collections empty and fill again often).
@Suite struct KeyBitsTests {
  @Test func keyBitsAnswersAsASet() {
    for seed in 1...8 as ClosedRange<UInt64> {
      var r = SimRandom(seed: seed)
      var bits = KeyBits()
      var set: Set<RecordKey> = []
      var mismatches = 0
      let top: Int64 = seed % 2 == 1 ? 9 : 199
      for _ in 0..<4_000 {
        let key = RecordKey(r.int(in: 0...top))
        switch r.int(in: 0..<10) {
        case 0..<4:
          bits.insert(key)
          set.insert(key)
        case 4..<7:
          bits.remove(key)
          set.remove(key)
        case 7:
          if r.chance(1, outOf: 20) {
            bits = []
            set = []
          }
        default:
          break
        }
        if bits.contains(key) != set.contains(key) || bits.isEmpty != set.isEmpty { mismatches += 1 }
        let probe = RecordKey(r.int(in: -3...260))
        if bits.contains(probe) != set.contains(probe) { mismatches += 1 }
      }
      for k in 0..<RecordKey(260) where bits.contains(k) != set.contains(k) { mismatches += 1 }
      #expect(mismatches == 0, "seed \(seed)")
    }
  }

  @Test func keyMapAnswersAsADictionary() {
    for seed in 1...8 as ClosedRange<UInt64> {
      var r = SimRandom(seed: seed)
      var map = KeyMap<[IntentID]>()
      var dictionary: [RecordKey: [IntentID]] = [:]
      var mismatches = 0
      let top: Int64 = seed % 2 == 1 ? 9 : 199
      for step in 0..<4_000 {
        let key = RecordKey(r.int(in: 0...top))
        switch r.int(in: 0..<10) {
        case 0..<3:
          map[key] = [IntentID(step)]
          dictionary[key] = [IntentID(step)]
        case 3..<5:
          // Changed in place through the optional, as the ledger appends a delete.
          if map[key] != nil { map[key]!.append(IntentID(step)) }
          if dictionary[key] != nil { dictionary[key]!.append(IntentID(step)) }
        case 5..<7:
          map[key] = nil
          dictionary[key] = nil
        default:
          break
        }
        if map[key] != dictionary[key] || map.isEmpty != dictionary.isEmpty { mismatches += 1 }
        let probe = RecordKey(r.int(in: -3...260))
        if map[probe] != dictionary[probe] { mismatches += 1 }
      }
      for k in 0..<RecordKey(260) where map[k] != dictionary[k] { mismatches += 1 }
      #expect(mismatches == 0, "seed \(seed)")
    }
  }

  @Test func emptyLiteralsAreEmpty() {
    let bits: KeyBits = []
    let listed: KeyBits = [3, 70, 3]
    let map: KeyMap<IntentID> = [:]
    let pairs: KeyMap<IntentID> = [5: 1, 5: 2]
    #expect(bits.isEmpty && !bits.contains(0))
    #expect(listed.contains(3) && listed.contains(70) && !listed.contains(4) && !listed.isEmpty)
    #expect(map.isEmpty && map[0] == nil)
    #expect(pairs[5] == 2 && !pairs.isEmpty)
    // Emptied again, key by key.
    var bits2 = listed
    bits2.remove(3)
    bits2.remove(70)
    bits2.remove(70)
    var map2 = pairs
    map2[5] = nil
    map2[6] = nil
    #expect(bits2.isEmpty && map2.isEmpty)
  }
}
