"""NeedleBench needle kinds (S-RT, M-RT, M-RS): typed data access, draws and the reference grids."""
