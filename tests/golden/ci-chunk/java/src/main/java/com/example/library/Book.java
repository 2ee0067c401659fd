package com.example.library;

/** A book in the catalogue, identified by its ISBN. */
public record Book(String isbn, String title, int year) {
    public Book {
        if (isbn == null || isbn.isBlank()) {
            throw new IllegalArgumentException("isbn");
        }
    }
}
