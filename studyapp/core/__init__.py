"""The app core: configuration, database, accounts, safe text, images, charts — what a study
type may build on."""
