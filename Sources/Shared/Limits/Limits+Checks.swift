extension Limits {
    /// Checks a record's size. Exactly at the limit passes.
    /// - Parameters:
    ///   - bytes: The record's size (``SizeAccounting/recordSize(fields:)``).
    ///   - className: The record's class, for the message.
    ///   - objectId: The record's ID, for the message.
    /// - Throws: ``RooftopError/Code/sizeLimit``, e.g. "record GameScore/abc is 120.0 KiB; the
    ///   limit is 100 KiB".
    public func checkRecordSize(_ bytes: Int, className: String, objectId: String) throws(RooftopError) {
        guard bytes > maxRecordBytes else { return }
        let text = ByteCountText.describe(bytes, limit: maxRecordBytes)
        throw RooftopError(.sizeLimit, "record \(className)/\(objectId) is \(text.size); the limit is \(text.limit)")
    }

    /// Checks an object's record size.
    ///
    /// ```swift
    /// try Limits().checkRecord(snapshot)
    /// ```
    /// - Throws: ``RooftopError/Code/sizeLimit`` when the record is over ``maxRecordBytes``.
    public func checkRecord(_ object: ObjectSnapshot) throws(RooftopError) {
        try checkRecordSize(SizeAccounting.recordSize(object), className: object.className, objectId: object.objectId)
    }

    /// Checks the number of records a datastore would hold after a write.
    /// - Throws: ``RooftopError/Code/sizeLimit`` when `count` is over ``maxRecordsPerDatastore``.
    public func checkRecordCount(_ count: Int, datastore: DatastoreID) throws(RooftopError) {
        guard count > maxRecordsPerDatastore else { return }
        throw RooftopError(
            .sizeLimit, "datastore \(datastore) would hold \(count) records; the limit is \(maxRecordsPerDatastore)")
    }

    /// Checks the size a datastore would have after a write
    /// (``SizeAccounting/datastoreSize(recordSizes:)``).
    /// - Throws: ``RooftopError/Code/sizeLimit`` when `bytes` is over ``maxDatastoreBytes``.
    public func checkDatastoreSize(_ bytes: Int, datastore: DatastoreID) throws(RooftopError) {
        guard bytes > maxDatastoreBytes else { return }
        let text = ByteCountText.describe(bytes, limit: maxDatastoreBytes)
        throw RooftopError(.sizeLimit, "datastore \(datastore) would be \(text.size); the limit is \(text.limit)")
    }

    /// Checks a push as a whole: the number of mutations and their size
    /// (``SizeAccounting/pushSize(_:)``). Failing it fails the whole push.
    /// - Throws: ``RooftopError/Code/sizeLimit`` naming the limit that is broken.
    public func checkPush(_ mutations: [Mutation]) throws(RooftopError) {
        if mutations.count > maxMutationsPerPush {
            throw RooftopError(
                .sizeLimit, "push has \(mutations.count) mutations; the limit is \(maxMutationsPerPush)")
        }
        try checkPushSize(SizeAccounting.pushSize(mutations))
    }

    /// Checks a push's size.
    /// - Throws: ``RooftopError/Code/sizeLimit`` when `bytes` is over ``maxPushBytes``.
    public func checkPushSize(_ bytes: Int) throws(RooftopError) {
        guard bytes > maxPushBytes else { return }
        let text = ByteCountText.describe(bytes, limit: maxPushBytes)
        throw RooftopError(.sizeLimit, "push is \(text.size); the limit is \(text.limit)")
    }

    /// Checks a request body's raw length.
    /// - Throws: ``RooftopError/Code/sizeLimit`` when `bytes` is over ``maxRequestBodyBytes``.
    public func checkRequestBody(_ bytes: Int) throws(RooftopError) {
        guard bytes > maxRequestBodyBytes else { return }
        let text = ByteCountText.describe(bytes, limit: maxRequestBodyBytes)
        throw RooftopError(.sizeLimit, "request body is \(text.size); the limit is \(text.limit)")
    }

    /// The limit to use for a query: the requested one, or ``defaultQueryLimit`` when none.
    /// - Throws: ``RooftopError/Code/illegalArgument`` for a negative limit,
    ///   ``RooftopError/Code/sizeLimit`` for one above ``maxQueryLimit`` (never silently lowered).
    public func queryLimit(requested: Int?) throws(RooftopError) -> Int {
        try bounded(requested, default: defaultQueryLimit, maximum: maxQueryLimit, minimum: 0, what: "query limit")
    }

    /// The page size to use for a pull: the requested one, or ``defaultPullPageSize`` when none.
    /// - Throws: ``RooftopError/Code/illegalArgument`` below 1, ``RooftopError/Code/sizeLimit``
    ///   above ``maxPullPageSize``.
    public func pullPageSize(requested: Int?) throws(RooftopError) -> Int {
        try bounded(requested, default: defaultPullPageSize, maximum: maxPullPageSize, minimum: 1, what: "pull limit")
    }

    private func bounded(
        _ requested: Int?, default fallback: Int, maximum: Int, minimum: Int, what: String
    ) throws(RooftopError) -> Int {
        guard let requested else { return fallback }
        if requested < minimum {
            throw RooftopError(.illegalArgument, "\(what) \(requested) is below \(minimum)", field: "limit")
        }
        if requested > maximum {
            throw RooftopError(.sizeLimit, "\(what) \(requested) is above the maximum of \(maximum)", field: "limit")
        }
        return requested
    }
}
