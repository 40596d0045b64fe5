import Replica

/// Causal questions about one record's intents, answered without comparing every pair.
///
/// They rest on one property of the log: an intent's causal context holds no ordinal above its
/// own — its device can only have received intents made before it, and a record's ordinals are
/// given in the order its intents are made (``IntentLog/append(_:)`` checks it in debug builds).
/// So `a → b` (``Intent/happenedBefore(_:)``) needs `a.ordinal < b.ordinal`, and only the intents
/// after `a` can have seen it. Each function gives exactly the answer of the pairwise form it
/// names, for lists of intents of one record in id order (the order of ``Oracle/byRecord``).
extension Oracle {
  /// For each of `intents`, whether it happened before some intent of `others`: the answers of
  /// `intents.map { a in others.contains { a.happenedBefore($0) } }`.
  ///
  /// - Complexity: O((n + m) · r), r the runs of a context (one integer when a record's edits
  ///   arrived in order), instead of O(n · m).
  static func happenedBeforeSome(_ intents: [Intent], of others: [Intent]) -> [Bool] {
    assert(isOneRecordInOrder(intents) && isOneRecordInOrder(others) && Set((intents.prefix(1) + others.prefix(1)).map(\.record)).count <= 1)
    var result = Array(repeating: false, count: intents.count)
    // What the intents of `others` after the one judged had received, together.
    var seen = CausalContext()
    var j = others.count
    for i in intents.indices.reversed() {
      let ordinal = intents[i].ordinal
      while j > 0, others[j - 1].ordinal > ordinal {
        j -= 1
        seen.formUnion(others[j].context)
      }
      result[i] = ordinal > 0 && seen.contains(ordinal)
    }
    return result
  }

  /// The first intent of `others`, in their order, that `intent` happened before: the answer of
  /// `others.first { intent.happenedBefore($0) }`, looking only past `intent`'s ordinal.
  static func firstAfter(_ intent: Intent, in others: [Intent]) -> Intent? {
    guard intent.ordinal > 0 else { return nil }
    var lo = 0
    var hi = others.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if others[mid].ordinal <= intent.ordinal { lo = mid + 1 } else { hi = mid }
    }
    return others[lo...].first { intent.happenedBefore($0) }
  }

  /// Whether every intent of `before` happened before `intent`: the answer of
  /// `before.allSatisfy { $0.happenedBefore(intent) }`, at once when `intent`'s context holds
  /// all of their ordinals in its contiguous prefix.
  static func allHappenedBefore(_ before: [Intent], _ intent: Intent) -> Bool {
    guard let first = before.first, let last = before.last else { return true }
    // The last of them is not in the context (or is the intent itself).
    if last.ordinal >= intent.ordinal { return false }
    if first.ordinal > 0, last.ordinal <= intent.context.prefix { return true }
    return before.allSatisfy { $0.happenedBefore(intent) }
  }

  /// Whether the intents are of one record, in id order with their ordinals rising (a debug
  /// check of the lists given to the functions above, made once a list, not once a call).
  static func isOneRecordInOrder(_ intents: [Intent]) -> Bool {
    zip(intents, intents.dropFirst()).allSatisfy { a, b in a.record == b.record && a.id < b.id && a.ordinal < b.ordinal }
  }
}
