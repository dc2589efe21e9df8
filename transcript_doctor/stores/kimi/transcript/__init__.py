"""Layer 3, transcript: the transcript reducers (the UI "messages" view and its `foldedLength`),
cold and following their live engine. May import `read` and `engines`."""
