import RooftopShared

extension RooftopClient {
    /// A query of every object of a class, to refine and run.
    ///
    /// ```swift
    /// let scores = try await client.query("GameScore").where(Field("score") > 100).limit(10).find()
    /// ```
    /// - Parameters:
    ///   - className: The class.
    ///   - datastore: The datastore (default: the app datastore `:app`).
    public func query(_ className: String, in datastore: DatastoreID = .app) -> RooftopQuery {
        RooftopQuery(core: core, query: Query(className), datastore: datastore)
    }

    /// A query from a shared `Query` value (built elsewhere, or decoded).
    /// - Parameters:
    ///   - query: The query.
    ///   - datastore: The datastore (default: the app datastore `:app`).
    public func query(_ query: Query, in datastore: DatastoreID = .app) -> RooftopQuery {
        RooftopQuery(core: core, query: query, datastore: datastore)
    }

    /// A query of a model's class.
    ///
    /// ```swift
    /// let scores = try await client.query(GameScore.self).order(by: "score").find(as: GameScore.self)
    /// ```
    public func query<Model: RooftopModel>(_ type: Model.Type, in datastore: DatastoreID = .app) -> RooftopQuery {
        query(Model.className, in: datastore)
    }

    /// Saves a model: its fields become the live object's (see ``RooftopObject/assign(_:)``),
    /// then the object is saved now, or queued durably with `eventually`.
    ///
    /// ```swift
    /// try await client.save(GameScore(score: 1337, playerName: "Sean Plott"), eventually: true)
    /// ```
    /// - Parameters:
    ///   - model: The model.
    ///   - datastore: The datastore (default: the app datastore `:app`).
    ///   - eventually: Queue the change (``RooftopObject/saveEventually()``) instead of saving
    ///     it now (``RooftopObject/save()``); default `false`.
    /// - Returns: The live object.
    /// - Throws: `badType` for a model that does not encode as fields; what `save()` or
    ///   `saveEventually()` throws. A model that does not encode changes nothing.
    @discardableResult
    public func save<Model: RooftopModel>(_ model: Model, in datastore: DatastoreID = .app, eventually: Bool = false)
        async throws -> RooftopObject
    {
        let object = object(Model.className, id: model.objectId, in: datastore)
        try object.assign(model)
        if eventually {
            try await object.saveEventually()
        } else {
            try await object.save()
        }
        return object
    }
}

extension RooftopQuery {
    /// Runs the query and decodes the objects as models.
    /// - Parameters:
    ///   - type: The model type.
    ///   - policy: Where results come from (default ``FetchPolicy/remoteOnly``).
    /// - Throws: What ``find(policy:)`` throws; `badType` for an object that does not decode.
    public func find<Model: RooftopModel>(as type: Model.Type, policy: FetchPolicy = .remoteOnly)
        async throws -> [Model]
    {
        try await find(policy: policy).models(as: type)
    }
}
