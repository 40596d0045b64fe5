import Testing

@testable import Replica

/// SplitMix64 with a fixed seed: the randomized tests below try the same cases on every run.
private struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  /// A number in `range`.
  mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
  /// True with probability `percent`/100.
  mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
  /// A string of `count` scalars from a small alphabet (so that searches find things and
  /// patterns overlap), with multi-byte scalars among them.
  mutating func text(_ count: ClosedRange<Int>, alphabet: [Unicode.Scalar] = ["a", "b", "c", " ", "é", "🙂"]) -> String {
    var s = String.UnicodeScalarView()
    for _ in 0..<int(count) { s.append(alphabet[int(0...(alphabet.count - 1))]) }
    return String(s)
  }
  /// `old` for a replacement: mostly a piece of the visible text, sometimes anything.
  mutating func needle(in text: TextValue) -> String {
    let visible = Array(text.string.unicodeScalars)
    guard !visible.isEmpty, chance(75) else { return self.text(0...3) }
    let start = int(0...(visible.count - 1))
    let end = Swift.min(visible.count, start + int(1...4))
    var s = String.UnicodeScalarView()
    s.append(contentsOf: visible[start..<end])
    return String(s)
  }
}

/// The visible text and ids as the obvious filters compute them.
private func expectViewsMatch(_ t: TextValue, sourceLocation: SourceLocation = #_sourceLocation) {
  var s = String.UnicodeScalarView()
  s.append(contentsOf: t.atoms.filter(\.isVisible).map(\.scalar))
  #expect(t.string == String(s), sourceLocation: sourceLocation)
  #expect(t.string.utf8.elementsEqual(String(s).utf8), sourceLocation: sourceLocation)
  #expect(t.visibleAtomIDs == t.atoms.filter(\.isVisible).map(\.id), sourceLocation: sourceLocation)
}

/// `merged(with:)` against `_mergedReference(with:)`, atom for atom. With `fast`, the one-walk
/// merge must also have accepted the inputs (not fallen back).
private func expectMergeMatchesReference(
  _ x: TextValue, _ y: TextValue, fast: Bool, sourceLocation: SourceLocation = #_sourceLocation
) {
  let reference = x._mergedReference(with: y)
  let merged = x.merged(with: y)
  #expect(merged.atoms == reference.atoms, sourceLocation: sourceLocation)
  if fast { #expect(x._mergedInOrder(with: y)?.atoms == reference.atoms, sourceLocation: sourceLocation) }
  if let inOrder = x._mergedInOrder(with: y) { #expect(inOrder.atoms == reference.atoms, sourceLocation: sourceLocation) }
}

/// `replace(_:with:by:)` and `replaceReturningRemoved(_:with:by:)` against
/// `_replaceReference(_:with:by:)`, atom for atom, and the removed ids against the set
/// difference of the visible ids before and after (as devices first computed them). Returns
/// whether `t` was changed.
private func replaceAsTheReferenceDoes(
  _ t: inout TextValue, _ old: String, with new: String, by intent: IntentID, sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
  var reference = t
  let referenceDone = reference._replaceReference(old, with: new, by: intent)
  func visible(_ t: TextValue) -> [AtomID] { t.atoms.filter(\.isVisible).map(\.id) }
  let expectedRemoved = referenceDone ? Set(visible(t)).subtracting(visible(reference)).sorted() : nil
  var reporting = t
  let removed = reporting.replaceReturningRemoved(old, with: new, by: intent)
  let done = t.replace(old, with: new, by: intent)
  #expect(done == referenceDone, sourceLocation: sourceLocation)
  #expect(t.atoms == reference.atoms, sourceLocation: sourceLocation)
  #expect(reporting.atoms == reference.atoms, sourceLocation: sourceLocation)
  #expect(removed == expectedRemoved, sourceLocation: sourceLocation)
  return done
}

@Suite struct TextValueMergeEquivalenceTests {
  /// Two or three replicas of one text edit it (appends, replacements, sets) with intent
  /// ids rising as time does, and merge each other's versions now and then, as devices and the
  /// server do under `text=merge`. Every merge is the reference's, taken by the one-walk path,
  /// and the merge is commutative, associative and idempotent.
  @Test func mergeMatchesTheReferenceForReplicasOfOneText() {
    var rng = SplitMix(seed: 0x7E47)
    var merges = 0
    for _ in 0..<100 {
      var nextIntent: IntentID = 1
      let base = rng.chance(20) ? TextValue() : TextValue(rng.text(1...12), by: 0)
      var replicas = [TextValue](repeating: base, count: rng.int(2...3))
      for _ in 0..<rng.int(5...40) {
        let k = rng.int(0...(replicas.count - 1))
        switch rng.int(0...99) {
        case 0..<30:
          replicas[k].append(rng.text(1...5), by: nextIntent)
          nextIntent += 1
        case 30..<62:
          let old = rng.needle(in: replicas[k])
          _ = replaceAsTheReferenceDoes(&replicas[k], old, with: rng.text(0...4), by: nextIntent)
          nextIntent += 1
        case 62..<66:  // a set, as a device makes it: the old text removed, the new appended
          replicas[k].removeAll(by: nextIntent)
          if rng.chance(70) { replicas[k].append(rng.text(1...6), by: nextIntent) }
          nextIntent += 1
        default:
          let l = (k + rng.int(1...(replicas.count - 1))) % replicas.count
          expectMergeMatchesReference(replicas[k], replicas[l], fast: true)
          expectMergeMatchesReference(replicas[l], replicas[k], fast: true)
          replicas[k] = replicas[k].merged(with: replicas[l])
          merges += 1
        }
      }
      for x in replicas {
        expectViewsMatch(x)
        for y in replicas {
          expectMergeMatchesReference(x, y, fast: true)
          let xy = x.merged(with: y)
          #expect(xy == y.merged(with: x))  // commutative
          #expect(xy.merged(with: xy) == xy)  // idempotent
          #expect(xy.merged(with: x) == xy && xy.merged(with: y) == xy)  // absorbs its inputs
          for z in replicas {
            #expect(xy.merged(with: z) == x.merged(with: y.merged(with: z)))  // associative
          }
        }
      }
      let all = replicas.dropFirst().reduce(replicas[0]) { $0.merged(with: $1) }
      expectViewsMatch(all)
      expectMergeMatchesReference(all, base, fast: true)
    }
    #expect(merges > 600)
  }

  /// Inputs edits to one text do not make: intent ids out of order (a replacement older than
  /// the text it lands in), ids used twice (two appends by one intent, texts from unrelated
  /// literals by intent 0), texts with no common history, characters inserted after any
  /// character at any place (out of RGA order, several starts). The one-walk merge either agrees
  /// with the reference or declines; `merged(with:)` always agrees.
  @Test func mergeMatchesTheReferenceForAnyInputs() {
    var rng = SplitMix(seed: 0xBAD5_EED)
    var accepted = 0
    var declined = 0
    for _ in 0..<300 {
      let alphabet: [Unicode.Scalar] = ["a", "b", "é"]
      var replicas = (0..<rng.int(2...3)).map { _ in TextValue(rng.text(0...6, alphabet: alphabet), by: IntentID(rng.int(0...2))) }
      if rng.chance(50) { replicas = replicas.map { _ in replicas[0] } }
      for _ in 0..<rng.int(3...25) {
        let k = rng.int(0...(replicas.count - 1))
        let intent = IntentID(rng.int(0...6))
        switch rng.int(0...99) {
        case 0..<30:
          replicas[k].append(rng.text(1...4, alphabet: alphabet), by: intent)
        case 30..<60:
          let old = rng.chance(80) ? rng.needle(in: replicas[k]) : rng.text(0...3, alphabet: alphabet)
          _ = replaceAsTheReferenceDoes(&replicas[k], old, with: rng.text(0...3, alphabet: alphabet), by: intent)
        case 60..<65:
          replicas[k].removeAll(by: intent)
        case 65..<72:  // characters put anywhere, after any character or at the start
          let atoms = replicas[k].atoms
          let parent = atoms.isEmpty || rng.chance(25) ? nil : atoms[rng.int(0...(atoms.count - 1))].id
          replicas[k]._insert(rng.text(1...3, alphabet: alphabet), after: parent, at: rng.int(0...atoms.count), by: intent)
        default:
          let l = (k + rng.int(1...(replicas.count - 1))) % replicas.count
          let x = replicas[k]
          let y = replicas[l]
          expectMergeMatchesReference(x, y, fast: false)
          if x._mergedInOrder(with: y) == nil { declined += 1 } else { accepted += 1 }
          replicas[k] = x.merged(with: y)
        }
      }
      for x in replicas {
        expectViewsMatch(x)
        for y in replicas { expectMergeMatchesReference(x, y, fast: false) }
      }
    }
    // Both paths were exercised.
    #expect(accepted > 100)
    #expect(declined > 100)
  }

  /// Versions of one text with one or two atoms damaged as no edit damages them: a parent,
  /// an id or a removal changed, an atom moved, copied or dropped. Whatever the atoms, the
  /// one-walk merge either agrees with the reference or declines.
  @Test func mergeMatchesTheReferenceForDamagedAtoms() {
    var rng = SplitMix(seed: 0xDA3A_6ED)
    var accepted = 0
    var declined = 0
    for _ in 0..<1_000 {
      let alphabet: [Unicode.Scalar] = ["a", "b"]
      var x = TextValue(rng.text(0...4, alphabet: alphabet), by: 0)
      var y = x
      var intent: IntentID = 1
      for _ in 0..<rng.int(1...6) {
        switch rng.int(0...3) {
        case 0: x.append(rng.text(1...3, alphabet: alphabet), by: intent)
        case 1: y.append(rng.text(1...3, alphabet: alphabet), by: intent)
        case 2: x.replace(rng.needle(in: x), with: rng.text(0...2, alphabet: alphabet), by: intent)
        default: y = y.merged(with: x)
        }
        intent += 1
      }
      func damaged(_ t: TextValue) -> TextValue {
        var atoms = t.atoms
        guard !atoms.isEmpty else { return t }
        func anyID() -> AtomID {
          let offset = rng.chance(5) ? (rng.chance(50) ? Int32.min : Int32.max) : Int32(rng.int(-1...4))
          return AtomID(intent: IntentID(rng.int(0...Int(intent))), offset: offset)
        }
        for _ in 0..<rng.int(1...2) {
          let k = rng.int(0...(atoms.count - 1))
          switch rng.int(0...6) {
          case 0: atoms[k].parent = rng.chance(20) ? nil : anyID()
          case 1: atoms[k].parent = atoms[rng.int(0...(atoms.count - 1))].id
          case 2: atoms[k].id = anyID()
          case 3: atoms[k].deletedBy = IntentID(rng.int(0...3))
          case 4:
            let moved = atoms.remove(at: k)
            atoms.insert(moved, at: rng.int(0...atoms.count))
          case 5: atoms.insert(atoms[k], at: rng.int(0...atoms.count))
          default: atoms.remove(at: k)
          }
          if atoms.isEmpty { break }
        }
        return TextValue(_atoms: atoms)
      }
      switch rng.int(0...2) {
      case 0: x = damaged(x)
      case 1: y = damaged(y)
      default: (x, y) = (damaged(x), damaged(y))
      }
      expectMergeMatchesReference(x, y, fast: false)
      expectMergeMatchesReference(y, x, fast: false)
      if x._mergedInOrder(with: y) == nil { declined += 1 } else { accepted += 1 }
    }
    #expect(accepted > 150)
    #expect(declined > 400)
  }

  /// Hand-made inputs the one-walk merge must decline or get right.
  @Test func oddInputsMergeAsTheReferenceDoes() {
    var older = TextValue("ab", by: 5)
    older.replace("a", with: "x", by: 3)  // x is older than b, its sibling: out of RGA order
    var twice = TextValue("ab", by: 1)
    twice.append("ab", by: 1)  // ids (1,0) and (1,1) twice
    var removed = TextValue("hello", by: 1)
    removed.removeAll(by: 4)
    var other = TextValue("hello", by: 1)
    other.removeAll(by: 2)
    let cases: [(TextValue, TextValue)] = [
      (older, TextValue("ab", by: 5)),
      (TextValue("ab", by: 5), older),
      (twice, TextValue("ab", by: 1)),
      (TextValue("ab", by: 1), twice),
      (TextValue("left", by: 0), TextValue("right", by: 0)),  // two literals by intent 0
      (TextValue("left", by: 3), TextValue("right", by: 2)),  // no common history
      (removed, other),  // both removed: the smaller intent wins
      (other, removed),
      (TextValue(), TextValue("x", by: 1)),
      (TextValue("x", by: 1), TextValue()),
    ]
    for (x, y) in cases { expectMergeMatchesReference(x, y, fast: false) }
    #expect(removed.merged(with: other).atoms.allSatisfy { $0.deletedBy == 2 })
    #expect(older._mergedInOrder(with: TextValue("ab", by: 5)) == nil)
    #expect(twice._mergedInOrder(with: TextValue("ab", by: 1)) == nil)
  }

  /// Replacements of overlapping and repeating patterns (where a naive restart and
  /// Knuth–Morris–Pratt could disagree), over tombstones, with empty and absent needles, in
  /// texts whose ids repeat (where a removed id can stay visible).
  @Test func replaceMatchesTheReference() {
    var rng = SplitMix(seed: 0x5EA4C4)
    for _ in 0..<2_000 {
      let alphabet: [Unicode.Scalar] = rng.chance(50) ? ["a", "b"] : ["a", "b", "🙂"]
      var t = TextValue(rng.text(0...20, alphabet: alphabet), by: 1)
      if rng.chance(20) { t.append(rng.text(1...8, alphabet: alphabet), by: 1) }  // ids twice
      for step in 0..<rng.int(1...6) {
        let intent = IntentID(2 + step)
        let old = rng.chance(70) ? rng.needle(in: t) : rng.text(0...5, alphabet: alphabet)
        _ = replaceAsTheReferenceDoes(&t, old, with: rng.text(0...3, alphabet: alphabet), by: intent)
        if rng.chance(10) { t.removeAll(by: intent) }
      }
      expectViewsMatch(t)
    }
    var t = TextValue("aaab", by: 1)
    let overlapping = t.replace("aab", with: "X", by: 2)
    #expect(overlapping && t.string == "aX")
    let empty = t.replace("", with: "Y", by: 3)
    let absent = t.replace("aXa", with: "Y", by: 3)
    #expect(!empty && !absent && t.string == "aX")
  }
}

@Suite struct TextAtomStatesTests {
  /// Against a dictionary filled in document order, on texts edits make (columns) and on atoms
  /// no edits make (negative or far-off ids, repeated ids: some fall back to the dictionary).
  @Test func statesAreWhatADictionarySays() {
    var rng = SplitMix(seed: 0x57A7E5)
    var columns = 0
    for round in 0..<600 {
      var t = TextValue(rng.text(0...6, alphabet: ["a", "b"]), by: IntentID(rng.int(0...2)))
      for step in 0..<rng.int(0...8) {
        let intent = IntentID(3 + step)
        switch rng.int(0...3) {
        case 0: t.append(rng.text(1...3, alphabet: ["a", "b"]), by: intent)
        case 1: t.replace(rng.needle(in: t), with: rng.text(0...2, alphabet: ["a", "b"]), by: intent)
        case 2: t.append(rng.text(1...3, alphabet: ["a", "b"]), by: IntentID(rng.int(0...2)))  // ids again
        default: t.removeAll(by: intent)
        }
      }
      var atoms = t.atoms
      if round % 3 == 0, !atoms.isEmpty {  // damage some ids
        for _ in 0..<rng.int(1...3) {
          let k = rng.int(0...(atoms.count - 1))
          let far: [Int32] = [-1, .min, .max, 5_000, 2_000_000]
          if rng.chance(50) {
            atoms[k].id.offset = far[rng.int(0...(far.count - 1))]
          } else {
            atoms[k].id.intent = far[rng.int(0...(far.count - 1))]
          }
        }
      }
      var expected: [AtomID: IntentID] = [:]
      var expectedDuplicates: [AtomID] = []
      for a in atoms {
        if expected[a.id] != nil, a.isVisible { expectedDuplicates.append(a.id) }
        expected[a.id] = a.deletedBy
      }
      let states = TextAtomStates(TextValue(_atoms: atoms))
      #expect(states.duplicates == expectedDuplicates)
      var probes = atoms.map(\.id)
      for _ in 0..<8 { probes.append(AtomID(intent: IntentID(rng.int(-1...12)), offset: Int32(rng.int(-1...12)))) }
      probes += [AtomID(intent: .max, offset: 0), AtomID(intent: 0, offset: .max), AtomID(intent: .min, offset: .min)]
      for id in probes { #expect(states[id] == expected[id]) }
      if states._inColumns { columns += 1 }
    }
    #expect(columns > 300 && columns < 600)  // both ways exercised
  }
}

@Suite struct TextValueScaleTests {
  /// `count` numbered words, "w000000 w000001 …", each one unique in the text.
  static func words(_ count: Int) -> [String] { (0..<count).map { n in "w" + String(repeating: "0", count: 6 - String(n).count) + String(n) } }

  /// Two versions of a 200 kB text that share its history and differ by a few edits on each
  /// side merge in one walk along both, not the fallback. No time is asserted (speed is
  /// watched end to end by `scripts/attack`'s big texts); the sizes keep the test quick in a
  /// debug build.
  @Test func mergingTwoLongVersionsThatShareTheirHistory() throws {
    let words = Self.words(25_000)  // 8 scalars each with the space: 200,000
    let base = TextValue(words.joined(separator: " "), by: 0)
    var a = base
    var b = base
    let one = a.replace("w001000", with: "ONE", by: 1)
    a.append(" tail", by: 3)
    let two = b.replace("w020000", with: "TWO", by: 2)
    let both = b.replace("w001000 w001001", with: "BOTH", by: 4)  // overlaps a's replacement
    #expect(one && two && both)
    let ab = try #require(a._mergedInOrder(with: b))  // the walk, not the fallback
    #expect(ab == b.merged(with: a))
    var expected = words
    expected[20_000] = "TWO"
    expected[1_000] = "ONEBOTH"  // both removed "w001000"; b also the space and "w001001"
    expected.remove(at: 1_001)
    #expect(ab.string == expected.joined(separator: " ") + " tail")
    #expect(ab.atoms.count == base.atoms.count + 3 + 5 + 3 + 4)
    // "w001000" removed by both (the smaller intent wins), the space and "w001001" by b, then "w020000" by b.
    let removedBy = ab.atoms.filter { !$0.isVisible }.map(\.deletedBy)
    #expect(removedBy == Array(repeating: 1, count: 7) + [4] + Array(repeating: 4, count: 7) + Array(repeating: 2, count: 7))
    #expect(ab.merged(with: a) == ab)
  }

  /// A thousand replacements, one after another, on a 20 kB text, merged into a second replica
  /// every hundred, as a device's edits reach the server: the text and the atoms come out as
  /// the words say. No time is asserted (`scripts/attack` runs 3,000 on 100 kB end to end).
  @Test func aThousandReplacesOnALongText() {
    let words = Self.words(2_500)  // 20,000 scalars
    var device = TextValue(words.joined(separator: " "), by: 0)
    var server = device
    var expected = words
    var rng = SplitMix(seed: 1_000)
    var intent: IntentID = 1
    for n in 0..<1_000 {
      let w = rng.int(0...(words.count - 1))
      let done = device.replace(words[w], with: "W\(n)", by: intent)
      #expect(done == (expected[w] == words[w]))
      if done { expected[w] = "W\(n)" }
      intent += 1
      if n % 100 == 99 {
        server = server.merged(with: device)
        device = device.merged(with: server)
      }
    }
    #expect(device.string == expected.joined(separator: " "))
    #expect(server.merged(with: device) == device)
    #expect(device.atoms.count == 20_000 - 1 + expected.filter { $0.hasPrefix("W") }.reduce(0) { $0 + $1.count })
  }
}
