/// Reads `x` where the optimizer cannot see it, so that the loads that made it are kept. Used to
/// read a batch's cold memory all at once before the batch is worked through (see
/// ``RecordTable/warm(_:)``): independent loads overlap, where the same misses met one by one,
/// each behind the work of the record before, do not.
@inline(never) @_optimize(none)
package func _keepLoads(_ x: Int) {}

/// From how many devices a world warms its batches (``RecordTable/warm(_:)``,
/// `CausalLedger.warm`): below it every device's records and contexts stay in the caches and the
/// extra pass is pure cost (1% of a 3-device fuzz seed's instructions); at 1,000 devices it took
/// about a fifth off `bench scale`. Never changes what happens, only how fast.
package let batchWarmingDevices = 16

extension RecordTable {
  /// Reads the slot of each record's key and the deletion of the copy it holds (the two lines
  /// an apply misses on first when the table is cold), and returns a value made of them.
  @inlinable
  package func warm(_ records: [RecordState]) -> Int {
    var sum = 0
    records.withUnsafeBufferPointer { records in
      _slots.withUnsafeBufferPointer { slots in
        for i in records.indices {
          let k = Int(records[i].key)
          guard k >= 0, k < slots.count, let deletedBy = slots[k]?.deletedBy else { continue }
          sum &+= Int(deletedBy)
        }
      }
    }
    return sum
  }
}
