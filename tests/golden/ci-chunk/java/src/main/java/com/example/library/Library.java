package com.example.library;

import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import static java.util.Objects.requireNonNull;

import com.example.library.Book;

/**
 * The lending desk: which member has which book, and until when.
 */
public class Library implements Lender {

    /** How long a loan lasts unless renewed. */
    public static final int LOAN_DAYS = 21;

    private final Map<String, Loan> loans = new HashMap<>();
    private final List<Book> catalogue = new ArrayList<>();

    /** The states a copy can be in. */
    public enum Status {
        AVAILABLE,
        ON_LOAN,
        LOST;

        boolean canLend() {
            return this == AVAILABLE;
        }
    }

    /** One loan of one book to one member. */
    static final class Loan {
        final String member;
        LocalDate due;

        Loan(String member, LocalDate due) {
            this.member = member;
            this.due = due;
        }
    }

    public Library(List<Book> books) {
        catalogue.addAll(requireNonNull(books));
    }

    @Override
    public boolean lend(String isbn, String member, LocalDate today) {
        if (status(isbn) != Status.AVAILABLE) {
            return false;
        }
        loans.put(isbn, new Loan(member, today.plusDays(LOAN_DAYS)));
        return true;
    }

    public Status status(String isbn) {
        if (find(isbn).isEmpty()) {
            return Status.LOST;
        }
        return loans.containsKey(isbn) ? Status.ON_LOAN : Status.AVAILABLE;
    }

    public Optional<Book> find(String isbn) {
        return catalogue.stream().filter(b -> b.isbn().equals(isbn)).findFirst();
    }

    public List<String> overdue(LocalDate today) {
        List<String> out = new ArrayList<>();
        loans.forEach((isbn, loan) -> {
            if (loan.due.isBefore(today)) {
                out.add(isbn);
            }
        });
        return out;
    }
}

/** Anything that lends books. */
interface Lender {
    boolean lend(String isbn, String member, LocalDate today);

    default boolean canLend() {
        return true;
    }
}
