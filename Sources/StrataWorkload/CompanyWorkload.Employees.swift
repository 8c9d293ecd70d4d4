extension CompanyWorkload {
    /// The employees of a ``CompanyWorkload``: a lazy, repeatable sequence.
    ///
    /// Each iteration starts from the generator state left after the departments and makes the employees one by
    /// one, so iterating twice yields the same employees and memory use does not grow with ``count``.
    ///
    /// ## Topics
    ///
    /// - ``count``
    /// - ``Iterator``
    public struct Employees: Sequence, Sendable {
        /// The number of employees the sequence yields.
        public let count: Int
        /// The generator state after the departments: where every iteration starts.
        @usableFromInline
        let start: SplitMix64

        @usableFromInline
        init(count: Int, generator: SplitMix64) {
            self.count = count
            self.start = generator
        }

        /// Returns an iterator over the employees, from the first.
        @inlinable
        public func makeIterator() -> Iterator {
            Iterator(generator: start, remaining: count)
        }

        /// The number of employees: the sequence's exact length.
        @inlinable
        public var underestimatedCount: Int { count }

        /// The iterator of ``CompanyWorkload/Employees``, making one employee per call.
        public struct Iterator: IteratorProtocol, Sendable {
            @usableFromInline
            var generator: SplitMix64
            @usableFromInline
            var remaining: Int

            @usableFromInline
            init(generator: SplitMix64, remaining: Int) {
                self.generator = generator
                self.remaining = remaining
            }

            /// Makes the next employee, or returns `nil` after the last.
            ///
            /// - Returns: The next employee, drawn in WORKLOAD.md's order: name, salary, hired, department.
            @inlinable
            public mutating func next() -> Employee? {
                guard remaining > 0 else { return nil }
                remaining -= 1
                let name = generator.makeName()
                let salary = Int64(generator.uniform(30_000, 200_000))
                let hired = 946_684_800 + generator.unit() * 750_000_000
                let department = Int(generator.uniform(1, UInt64(CompanyWorkload.departmentCount)))
                return Employee(name: name, salary: salary, hired: hired, department: department)
            }
        }
    }
}
