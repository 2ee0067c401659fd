namespace Acme.Billing;

/// <summary>An amount in a currency, in minor units.</summary>
public readonly record struct Money(long Cents, string Currency)
{
    public static Money Zero(string currency) => new(0, currency);

    public Money Add(Money other) =>
        other.Currency == Currency ? this with { Cents = Cents + other.Cents }
                                   : throw new InvalidOperationException("currency mismatch");
}
